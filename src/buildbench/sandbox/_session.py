"""The process that runs user code: the namespace, the limits and the report of each request.

It is forked by the sandbox supervisor (`_child`) and talks only to it, over two pipes of its
own; it never holds the descriptor the parent reads envelopes from. Everything here runs in
the same process as the user's code, so the user's code can change any of it: what this
process reports (including the value of a collect hook) is data the user controls, which the
supervisor and the parent check for shape and size, never trust for status or timing.
"""

from __future__ import annotations

import builtins
import importlib
import json
import linecache
import math
import os
import resource
import sys
import traceback

from buildbench.sandbox._protocol import read_frame, write_frame

# Not `typing.TYPE_CHECKING`: importing typing would cost every sandboxed child's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Reply = dict[str, Any]

CODE_FILENAME = "<code>"
_MAX_REQUEST_BYTES = (1 << 31) - 1
_MAX_TRACEBACK_CHARS = 50_000
_MAX_ERROR_CHARS = 5_000


def _clip(text: str, limit: int) -> str:
    """Shorten ``text`` to ``limit`` characters, keeping both ends (tracebacks end with the cause)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - limit} characters cut] ...\n{text[-half:]}"


def _describe(exc: BaseException) -> str:
    """``"ExcType: message"``, or just the type name when the message is empty."""
    message = str(exc)
    return _clip(f"{type(exc).__name__}: {message}" if message else type(exc).__name__, _MAX_ERROR_CHARS)


def _trimmed_traceback(exc: BaseException) -> str:
    """Format ``exc`` without the leading frames that belong to this harness module."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return _clip("".join(traceback.format_exception(type(exc), exc, tb)), _MAX_TRACEBACK_CHARS)


def _failure(exc: BaseException, *, prefix: str = "") -> Reply:
    """The reply for an exception raised by user code or by the setup hook."""
    status = "memory" if isinstance(exc, MemoryError) else "error"
    return {"status": status, "error": prefix + _describe(exc), "traceback": _trimmed_traceback(exc)}


def _apply_limits(limits: dict[str, Any]) -> None:
    """Lower this process's rlimits; without privileges it cannot raise them again."""
    address_space = int(limits["memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if limits.get("disk_bytes") is not None:
        # Python ignores SIGXFSZ, so a write past the cap raises OSError(EFBIG) in the user code.
        size = int(limits["disk_bytes"])
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    if limits.get("max_processes") is not None:
        count = int(limits["max_processes"])
        resource.setrlimit(resource.RLIMIT_NPROC, (count, count))


def _arm_cpu_limit(cpu_s: int) -> None:
    """Allow ``cpu_s`` more CPU seconds from now; past that the kernel sends SIGXCPU.

    RLIMIT_CPU counts the process's whole life, so each call moves the soft limit
    forward; the hard limit stays where it was so the next call can move it again.
    """
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime) + int(cpu_s)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _load_hook(path: str) -> Callable[..., Any]:
    """Resolve ``"package.module:function"`` to the callable it names."""
    module_name, sep, attribute = path.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"setup must look like 'package.module:function', got {path!r}")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"setup {path!r} names a {type(target).__name__}, not a callable")
    return target


def _is_setup_result(value: object) -> bool:
    """isinstance check that imports the dataclass module only when a hook used it anyway."""
    if "buildbench.sandbox._types" not in sys.modules:
        return False
    return isinstance(value, sys.modules["buildbench.sandbox._types"].SetupResult)


def _children() -> set[int]:
    """Pids of this process's children, zombies included (empty where /proc does not list them)."""
    found: set[int] = set()
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/children") as f:
                found.update(int(pid) for pid in f.read().split())
    except OSError:
        pass
    return found


class _Session:
    """The namespace and collect hook kept across the requests of one process."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {}
        self.collect: Callable[[dict[str, Any]], Any] | None = None
        self.result_bytes = 10_000_000
        self.cpu_s = 30
        self.setup_children: set[int] = set()

    def reap(self) -> None:
        """Collect the exit status of children an earlier call left (the supervisor kills them
        after each call): each zombie would hold a slot of RLIMIT_NPROC. Children the setup
        started (Blender) are left to the hook that waits for them."""
        for pid in _children() - self.setup_children:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                continue

    def setup(self, request: dict[str, Any]) -> Reply:
        """Apply limits, then build the namespace through the optional hook."""
        limits = request["limits"]
        _apply_limits(limits)
        self.result_bytes = int(limits["result_bytes"])
        self.cpu_s = int(limits["cpu_s"])
        _arm_cpu_limit(self.cpu_s)
        hook_path = request.get("setup")
        if hook_path:
            try:
                built = _load_hook(hook_path)(request.get("inputs") or {})
            except BaseException as exc:  # any failure of the hook is reported, not raised
                return _failure(exc, prefix=f"setup {hook_path!r} failed: ")
            if isinstance(built, dict):
                self.namespace = built
            elif _is_setup_result(built):
                self.namespace, self.collect = built.globals, built.collect
            else:
                return {
                    "status": "error",
                    "error": f"setup {hook_path!r} returned a {type(built).__name__}; expected a dict or SetupResult",
                }
        self.namespace.setdefault("__name__", "__main__")
        self.namespace.setdefault("__builtins__", builtins)
        self.setup_children = _children()
        return {"status": "ok"}

    def execute(self, code: str) -> Reply:
        """Run ``code`` in the namespace and collect its result."""
        _arm_cpu_limit(self.cpu_s)
        linecache.cache[CODE_FILENAME] = (len(code), None, code.splitlines(keepends=True), CODE_FILENAME)
        self.namespace.pop("result", None)
        try:
            exec(compile(code, CODE_FILENAME, "exec"), self.namespace)
        except SystemExit as exc:
            if exc.code not in (None, 0):
                return _failure(exc)
        except MemoryError as exc:
            # The parent discards this process after a MemoryError; dropping the user's
            # objects now leaves room to format the report.
            self.namespace.clear()
            try:
                return _failure(exc)
            except MemoryError:
                return {"status": "memory", "error": "MemoryError"}
        except BaseException as exc:  # everything the user code raises is reported
            return _failure(exc)
        return self._collect()

    def _collect(self) -> Reply:
        """Serialise the call's result, turning any problem into a clear error reply."""
        try:
            value = self.collect(self.namespace) if self.collect else self.namespace.get("result")
        except BaseException as exc:  # the hook is user-supplied code too
            return _failure(exc, prefix="collect hook failed: ")
        try:
            text = json.dumps(value)
        except MemoryError as exc:
            return _failure(exc)
        except (TypeError, ValueError) as exc:
            return {"status": "error", "error": f"TypeError: result is not JSON-serialisable: {exc}"}
        if len(text) > self.result_bytes:
            return {
                "status": "error",
                "error": f"ValueError: result is {len(text)} bytes as JSON, over the {self.result_bytes}-byte limit",
            }
        return {"status": "ok", "result_json": text}


def _flush_streams() -> None:
    """Flush the user's streams so their output precedes the supervisor's end marker."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # a stream the user broke must not stop the report
            pass


def serve(request_fd: int, report_fd: int) -> None:
    """Answer the supervisor's requests until it closes the request pipe; never returns."""
    session = _Session()
    runner_pid = os.getpid()
    status = 1
    try:
        while True:
            request = read_frame(request_fd, max_bytes=_MAX_REQUEST_BYTES)
            if request is None:
                break
            token = request.pop("token", None)
            session.reap()
            try:
                reply = session.setup(request) if request["op"] == "setup" else session.execute(request["code"])
            finally:
                if os.getpid() != runner_pid:
                    # A process the user code forked fell back into this loop: it must not report.
                    _flush_streams()
                    os._exit(0)
            _flush_streams()
            try:
                write_frame(report_fd, {**reply, "token": token})
            except MemoryError:
                write_frame(report_fd, {"status": "memory", "token": token,
                                        "error": "MemoryError: out of memory while sending the reply"})
        status = 0
    except BaseException:  # noqa: BLE001 - said on stderr, then the exit status tells the supervisor
        traceback.print_exc()
    finally:
        _flush_streams()
        os._exit(status)
