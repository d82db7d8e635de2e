"""The public entry points: `run_code`, `Worker`, `sandbox_available`."""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import Any

from buildbench.sandbox._disk import crowded
from buildbench.sandbox._launch import Backend, SandboxUnavailable, package_view
from buildbench.sandbox._process import SandboxProcess
from buildbench.sandbox._tree import remove_tree
from buildbench.sandbox._types import Envelope, Isolation, Limits
from buildbench.sandbox.lifetime import lock_workdir

_log = logging.getLogger(__name__)
_PROBE_LIMITS = Limits(wall_s=20, cpu_s=10, memory_mb=1024, max_processes=64)


@dataclass(frozen=True)
class IsolationInfo:
    """Which backend ``isolation="auto"`` picks on this machine, and why.

    Attributes:
        backend: ``"bwrap"`` or ``"process"``.
        detail: For bwrap, what it enforces; for process, why bwrap is not used.
    """

    backend: Backend
    detail: str

    def __bool__(self) -> bool:
        """True when the strong (bwrap) isolation is available."""
        return self.backend == "bwrap"


@functools.cache
def _bwrap_problem() -> str | None:
    """Start one bwrap child and run a trivial call; None if that worked, else why not."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    workdir = tempfile.mkdtemp(prefix="buildbench-probe-")
    try:
        process = SandboxProcess("bwrap", workdir, _PROBE_LIMITS)
        try:
            envelope = process.request({"op": "setup", "limits": _limits_message(_PROBE_LIMITS, "bwrap")})
            if envelope.ok:
                envelope = process.request({"op": "exec", "code": "import sys\nresult = sys.base_prefix"})
        finally:
            process.stop()
    except (OSError, SandboxUnavailable) as exc:
        return f"bwrap could not be started: {exc}"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if envelope.ok and envelope.result == sys.base_prefix:
        return None
    if envelope.ok:
        # A sandbox that cannot read the real installation may start on another Python's stdlib.
        return f"the sandboxed interpreter found the standard library of {envelope.result!r}, not {sys.base_prefix!r}"
    return f"a trial bwrap call failed: {envelope.error}; stderr: {envelope.stderr[-500:]!r}"


def sandbox_available() -> IsolationInfo:
    """Say which isolation ``isolation="auto"`` uses here (probed once per process)."""
    problem = _bwrap_problem()
    if problem is None:
        identity = "a fresh unprivileged uid" if os.geteuid() == 0 else "a user namespace"
        detail = (
            f"bubblewrap: no network, read-only host, private /tmp and PID namespace, {identity}, pid limit"
        )
        return IsolationInfo("bwrap", detail)
    return IsolationInfo("process", problem)


_fallback_warned = threading.Event()

#: Set to ``1`` to let ``isolation="auto"`` run agent code as a plain process where bwrap does not work.
ALLOW_UNSANDBOXED_ENV = "BUILDBENCH_ALLOW_UNSANDBOXED"


def _unsandboxed_allowed() -> bool:
    return os.environ.get(ALLOW_UNSANDBOXED_ENV, "").strip().lower() in ("1", "true", "yes")


def resolve_isolation(isolation: Isolation) -> Backend:
    """Turn an isolation request into a backend.

    ``auto`` is bwrap where it works. Elsewhere it refuses, since untrusted code would run with
    the harness's own rights, unless ``BUILDBENCH_ALLOW_UNSANDBOXED=1`` opts in to a plain
    process (warned once per process); ``isolation="process"`` asks for one explicitly.

    Raises:
        SandboxUnavailable: bwrap does not work here and nothing opted in to running without it.
        ValueError: ``isolation`` is not one of ``auto``, ``bwrap``, ``process``.
    """
    if isolation == "process":
        return "process"
    if isolation not in ("auto", "bwrap"):
        raise ValueError(f"isolation must be 'auto', 'bwrap' or 'process', got {isolation!r}")
    problem = _bwrap_problem()
    if problem is None:
        return "bwrap"
    if isolation == "bwrap":
        raise SandboxUnavailable(problem)
    if not _unsandboxed_allowed():
        raise SandboxUnavailable(
            f"{problem}, so agent code cannot be sandboxed; apt-get install bubblewrap, or set "
            f"{ALLOW_UNSANDBOXED_ENV}=1 to run it unsandboxed"
        )
    if not _fallback_warned.is_set():
        _fallback_warned.set()
        _log.warning(
            "sandbox: %s; %s=1, so untrusted code runs as a plain subprocess (no network or filesystem "
            "isolation)", problem, ALLOW_UNSANDBOXED_ENV,
        )
    return "process"


def _limits_message(limits: Limits, backend: Backend) -> dict[str, Any]:
    return {
        "memory_mb": limits.memory_mb,
        "cpu_s": limits.cpu_s,
        "result_bytes": limits.result_bytes,
        "disk_bytes": limits.disk_mb * 1024 * 1024,
        "max_processes": limits.max_processes if backend == "bwrap" else None,
    }


def _hook_module(setup: str | None) -> tuple[str, ...]:
    """The setup hook's module when it is one of buildbench (shown in the sandbox); a name that
    is no module is left out, so the setup fails inside, naming it, as any bad hook does."""
    module = (setup or "").partition(":")[0]
    try:
        package_view([module])
    except ValueError:
        return ()
    return (module,)


def _write_files(workdir: Path, files: Mapping[str, bytes | str]) -> None:
    """Write ``files`` (relative path -> content) into ``workdir``, refusing paths that leave it."""
    for name, content in files.items():
        relative = PurePosixPath(name)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise ValueError(f"files: {name!r} must be a relative path inside the work folder")
        if not isinstance(content, bytes | str):
            raise TypeError(f"files: content of {name!r} must be bytes or str, got {type(content).__name__}")
        target = workdir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)


def _check_setup(setup: str | None, inputs: Mapping[str, Any] | None) -> dict[str, Any]:
    if setup is not None:
        module, sep, attribute = setup.partition(":") if isinstance(setup, str) else ("", "", "")
        if not (sep and module and attribute):
            raise ValueError(f"setup must look like 'package.module:function', got {setup!r}")
    if inputs is None:
        return {}
    if not isinstance(inputs, Mapping):
        raise TypeError(f"inputs must be a dict, got {type(inputs).__name__}")
    try:
        return json.loads(json.dumps(dict(inputs)))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"inputs must be JSON-serialisable: {exc}") from exc


class Worker:
    """One sandboxed process that keeps its namespace across calls.

    The setup hook runs once per process; each `call` runs code in the namespace it
    built, under the per-call limits. If a call times out, hits the memory limit,
    crashes or is killed, the process is discarded and the next call starts a fresh
    one, with ``Envelope.worker_restarted`` set to say that earlier state is lost.

    Example:
        >>> with Worker(limits=Limits(wall_s=5)) as worker:
        ...     worker.call("x = 2").status
        ...     worker.call("result = x * 21").result
        'ok'
        42
    """

    def __init__(
        self,
        *,
        setup: str | None = None,
        inputs: Mapping[str, Any] | None = None,
        limits: Limits | None = None,
        workdir: str | os.PathLike[str] | None = None,
        files: Mapping[str, bytes | str] | None = None,
        isolation: Isolation = "auto",
        readable: tuple[str | os.PathLike[str], ...] = (),
        python_path: tuple[str | os.PathLike[str], ...] = (),
        modules: tuple[str, ...] = (),
    ) -> None:
        """Prepare the worker; the process starts on the first call.

        Args:
            setup: ``"package.module:function"`` called inside the child as
                ``function(inputs)``; it returns the globals dict (or a `SetupResult`).
            inputs: JSON-serialisable dict handed to the setup hook.
            limits: Resource limits (defaults: `Limits()`).
            workdir: The one writable folder; created (and removed on close) when None.
                Under bwrap as root, an existing folder and its contents belong to the
                sandbox uid while a process runs and to the caller's uid afterwards.
            files: Files to write into the work folder first (relative path -> content).
            isolation: ``"auto"``, ``"bwrap"`` or ``"process"`` (see `resolve_isolation`: ``auto``
                refuses where bwrap does not work unless ``BUILDBENCH_ALLOW_UNSANDBOXED=1``).
            readable: Host paths the code may read (read-only) besides the interpreter and
                its libraries: under bwrap nothing else of the host is visible.
            python_path: Folders put on the child's PYTHONPATH (read-only), for a setup hook
                outside installed packages; the caller's own ``sys.path`` is never passed on.
            modules: Modules and packages of buildbench the code may import (under bwrap) besides
                ``buildbench.sandbox`` and the setup hook's own module: the rest of buildbench
                (task generators, verifiers, everything that holds or makes ground truth) does
                not exist inside the sandbox.

        Raises:
            ValueError: A bad ``setup``, ``inputs``, ``files`` path, ``isolation`` or ``modules``.
            SandboxUnavailable: bwrap does not work here and ``isolation`` is ``"bwrap"``, or
                ``"auto"`` without the opt-in.
        """
        self._inputs = _check_setup(setup, inputs)
        self._setup = setup
        self.limits = limits or Limits()
        self.backend: Backend = resolve_isolation(isolation)
        self.readable = tuple(str(Path(p).resolve()) for p in readable)
        self.python_path = tuple(str(Path(p).resolve()) for p in python_path)
        package_view(modules)  # a bad name fails here, not at the first call
        self.modules = (*modules, *_hook_module(setup))
        self._remove_workdir: weakref.finalize | None = None
        if workdir is None:
            folder = Path(tempfile.mkdtemp(prefix="buildbench-sandbox-")).resolve()
            # Removed on close(), or when a worker is dropped without it.
            self._remove_workdir = weakref.finalize(self, remove_tree, str(folder))
        else:
            folder = Path(workdir).resolve()
            if not folder.is_dir():
                raise ValueError(f"workdir {str(folder)!r} is not an existing folder")
        self.workdir = folder
        try:
            _write_files(folder, files or {})
            # Held while the worker lives: `clean_stale_workdirs` of a later run leaves the folder alone.
            lock = lock_workdir(folder)
        except (OSError, TypeError, ValueError):
            self._discard_workdir()
            raise
        self._unlock = weakref.finalize(self, os.close, lock)
        self._process: SandboxProcess | None = None
        self._state_lost = False
        self._closed = False
        self._lock = threading.Lock()

    def __enter__(self) -> Worker:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def call(self, code: str) -> Envelope:
        """Run ``code`` in the worker's namespace and return its envelope."""
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        with self._lock:
            if self._closed:
                raise RuntimeError("Worker.call() after close()")
            restarted = False
            if self._process is None or not self._process.alive:
                refused = crowded(str(self.workdir), self.limits.disk_entries)
                if refused is not None:
                    return Envelope("limit", error=refused, isolation=self.backend)
                restarted = self._state_lost
                self._state_lost = False
                setup_envelope = self._start()
                if setup_envelope is not None:
                    return _mark_restart(setup_envelope, restarted)
            assert self._process is not None
            envelope = self._process.request({"op": "exec", "code": code})
            if not self._process.alive:
                self._state_lost = True
            return _mark_restart(envelope, restarted)

    def running(self) -> bool:
        """Whether the process of the earlier calls still runs, holding their state (False before the
        first call and once it ended): a caller that keeps state there knows before its next call
        that it starts a fresh one (a process killed from outside between calls)."""
        with self._lock:
            return self._process is not None and not self._process.ended()

    def _start(self) -> Envelope | None:
        """Start a process and run the setup hook; an envelope only if that failed."""
        self._process = SandboxProcess(self.backend, str(self.workdir), self.limits, self.readable,
                                       self.python_path, self.modules)
        message = {
            "op": "setup",
            "own_pid_namespace": self.backend == "bwrap",
            "limits": _limits_message(self.limits, self.backend),
            "setup": self._setup,
            "inputs": self._inputs,
        }
        envelope = self._process.request(message)
        if envelope.ok:
            return None
        self._process.stop()
        return envelope

    def reset(self) -> None:
        """Discard the process and its state; the next call starts fresh (not flagged as a restart)."""
        with self._lock:
            self._stop()
            self._state_lost = False

    def close(self) -> None:
        """Stop the process, give the work folder back, and remove it if the worker created it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stop()
            self._discard_workdir()
            self._unlock()

    def _discard_workdir(self) -> None:
        if self._remove_workdir is not None:
            self._remove_workdir()

    def _stop(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process = None


def _mark_restart(envelope: Envelope, restarted: bool) -> Envelope:
    return dataclasses.replace(envelope, worker_restarted=True) if restarted else envelope


def run_code(
    code: str,
    *,
    limits: Limits | None = None,
    workdir: str | os.PathLike[str] | None = None,
    files: Mapping[str, bytes | str] | None = None,
    setup: str | None = None,
    inputs: Mapping[str, Any] | None = None,
    isolation: Isolation = "auto",
    readable: tuple[str | os.PathLike[str], ...] = (),
    python_path: tuple[str | os.PathLike[str], ...] = (),
    modules: tuple[str, ...] = (),
) -> Envelope:
    """Run ``code`` once in a fresh sandboxed process and return its envelope.

    The setup hook (if any) runs first, under its own wall budget of ``limits.wall_s``;
    then the code, under the full limits. Arguments are those of `Worker`.

    Example:
        >>> run_code("result = sum(range(10))").result
        45
    """
    with Worker(
        setup=setup, inputs=inputs, limits=limits, workdir=workdir, files=files, isolation=isolation,
        readable=readable, python_path=python_path, modules=modules,
    ) as worker:
        return worker.call(code)
