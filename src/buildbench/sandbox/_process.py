"""One running sandboxed child: start it, send it requests, classify how it ended."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import secrets
import select
import signal
import subprocess
import threading
import time
import weakref
from concurrent.futures import Future
from typing import Any

from buildbench.sandbox._child import descendants
from buildbench.sandbox._disk import DiskQuota, Usage
from buildbench.sandbox._launch import Backend, LaunchPlan, hand_over, plan_launch
from buildbench.sandbox._memory import MemoryBudget
from buildbench.sandbox._protocol import FrameTimeout, ProtocolError, field_problem, read_frame, write_frame
from buildbench.sandbox._streams import StreamCollector
from buildbench.sandbox._types import Envelope, Limits, Status

# After the reply arrives, the end markers are already in the pipes; this only
# bounds the wait when user code closed or hijacked its stdout/stderr.
_MARKER_GRACE_S = 1.0
# How long to wait for a child that closed its reply pipe to finish dying.
_EXIT_GRACE_S = 5.0
# Room in a reply frame beyond the result itself (error text, traceback).
_REPLY_OVERHEAD_BYTES = 1_000_000

_CRASH_SIGNALS = {
    signal.SIGSEGV,
    signal.SIGBUS,
    signal.SIGILL,
    signal.SIGFPE,
    signal.SIGABRT,
    signal.SIGSYS,
    signal.SIGTRAP,
}


#: What a reply from the supervisor may hold, and the types of each field.
_REPLY_FIELDS: dict[str, tuple[type, ...]] = {"nonce": (str,), "status": (str,), "result_json": (str,),
                                              "error": (str,), "traceback": (str,), "returncode": (int,)}
_REPLY_STATUSES = ("ok", "error", "memory", "crash", "exited")


class _OverQuota(Exception):
    """The work folder went over the disk quota, or the sandbox over its memory budget, during a call."""


def _reply_problem(reply: dict[str, Any], nonce: str) -> str | None:
    """What is wrong with a reply frame (fields, types, status, nonce), or None."""
    problem = field_problem(reply, _REPLY_FIELDS)
    if problem is not None:
        return problem
    if reply.get("nonce") != nonce:
        return "it does not answer this request (wrong nonce)"
    if reply.get("status") not in _REPLY_STATUSES:
        return f"unknown status {reply.get('status')!r}"
    if (reply["status"] == "exited") != ("returncode" in reply):
        return "a returncode belongs to an exited status only"
    if "result_json" in reply and reply["status"] != "ok":
        return "a result comes with an ok status only"
    return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class _Spawner:
    """Starts every child from one long-lived thread.

    bwrap's ``--die-with-parent`` relies on PR_SET_PDEATHSIG, which fires when the
    *thread* that forked bwrap exits, not the process. A worker started from a
    short-lived thread (a pool task, ``asyncio.to_thread``) would otherwise be killed
    as soon as that thread ends. This daemon thread lives as long as the interpreter.
    """

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[tuple[Future[subprocess.Popen[bytes]], list[str], dict[str, Any]]]
        self._requests = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def popen(self, argv: list[str], **options: Any) -> subprocess.Popen[bytes]:
        """``subprocess.Popen(argv, **options)``, run on the spawner thread."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="sandbox-spawner", daemon=True)
                self._thread.start()
        done: Future[subprocess.Popen[bytes]] = Future()
        self._requests.put((done, argv, options))
        return done.result()

    def _serve(self) -> None:
        while True:
            done, argv, options = self._requests.get()
            try:
                done.set_result(subprocess.Popen(argv, **options))
            except BaseException as exc:  # handed to the caller, who re-raises it
                done.set_exception(exc)


_spawner = _Spawner()


def _kill_group(popen: subprocess.Popen[bytes]) -> None:
    """SIGKILL every process below the child, then its whole process group (under bwrap that
    also ends its PID namespace). The tree goes first: a daemon that left the group is still in
    it (the plain-process supervisor is a subreaper), and would be orphaned to init if the
    supervisor died before it."""
    deadline = time.monotonic() + _EXIT_GRACE_S
    while time.monotonic() < deadline and (tree := descendants(popen.pid)):
        for pid in tree:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.001)
    try:
        os.killpg(popen.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        popen.wait(timeout=_EXIT_GRACE_S)
    except subprocess.TimeoutExpired:
        popen.kill()
        popen.wait()


def _sweep_uid(uid: int, timeout_s: float = _EXIT_GRACE_S) -> None:
    """SIGKILL every host process of the sandbox uid and wait until none is left.

    Killing the namespace's init makes the kernel kill the rest, but asynchronously;
    the work folder is only handed back once nothing can write to it any more.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = False
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    found = True
                    os.kill(int(name), signal.SIGKILL)
            except (FileNotFoundError, ProcessLookupError):
                continue
        if not found:
            return
        time.sleep(0.01)


class SandboxProcess:
    """A started child (see `_child`) and the pipes to talk to it.

    Not thread-safe; `Worker` serialises calls.
    """

    def __init__(self, backend: Backend, workdir: str, limits: Limits, readable: tuple[str, ...] = (),
                 python_path: tuple[str, ...] = (), modules: tuple[str, ...] = ()) -> None:
        self.backend = backend
        self.limits = limits
        self._workdir = workdir
        request_read, self._request_fd = os.pipe()
        self._reply_fd, reply_write = os.pipe()
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        child_ends = (request_read, reply_write, out_write, err_write)
        plan: LaunchPlan | None = None
        self._memory: MemoryBudget | None = None
        try:
            plan = self._plan = plan_launch(backend, workdir, limits, request_read, reply_write, readable,
                                            python_path, modules)
            self._memory = MemoryBudget(limits.memory_mb * 1024 * 1024, plan.sandbox_uid)
            if plan.sandbox_uid is not None:
                hand_over(workdir, plan.sandbox_uid, plan.sandbox_uid)
            self._popen = _spawner.popen(
                self._memory.wrap(plan.argv),
                stdin=subprocess.DEVNULL,
                stdout=out_write,
                stderr=err_write,
                pass_fds=(request_read, reply_write, *plan.pass_fds),
                env=plan.env,
                cwd=plan.cwd,
                start_new_session=True,
            )
        except BaseException:
            for fd in (*child_ends, self._request_fd, self._reply_fd, out_read, err_read,
                       *(plan.pass_fds if plan is not None else ())):
                os.close(fd)
            if plan is not None and plan.sandbox_uid is not None:
                hand_over(workdir, os.geteuid(), os.getegid())
            if self._memory is not None:
                self._memory.close()
            raise
        self._memory.set_root(self._popen.pid)
        for fd in (*child_ends, *plan.pass_fds):
            os.close(fd)
        self._stdout = StreamCollector(out_read, limits.output_bytes)
        self._stderr = StreamCollector(err_read, limits.output_bytes)
        self._alive = True
        self._finalizer = weakref.finalize(self, _kill_group, self._popen)
        self._quota = DiskQuota(workdir, limits.disk_mb * 1024 * 1024, limits.disk_entries, plan.sandbox_uid)

    @property
    def memory(self) -> MemoryBudget:
        """The sandbox's memory budget (its mechanism and the peak seen)."""
        assert self._memory is not None
        return self._memory

    @property
    def alive(self) -> bool:
        """False once the child died or was stopped."""
        return self._alive

    def ended(self) -> bool:
        """True when the child is gone since the last request (stopped, or it died: its reply pipe hung up)."""
        if not self._alive:
            return True
        poller = select.poll()
        poller.register(self._reply_fd, select.POLLHUP | select.POLLERR)
        return bool(poller.poll(0))

    def request(self, message: dict[str, Any]) -> Envelope:
        """Send one request (``setup`` or ``exec``) and wait, within the wall limit, for its outcome."""
        marker = secrets.token_hex(16)
        nonce = secrets.token_hex(16)
        for stream in (self._stdout, self._stderr):
            stream.begin(f"\x00{marker}\x00".encode("ascii"))
        started = time.monotonic()
        deadline = started + self.limits.wall_s
        disk_at_start = self._quota.at_start()
        if isinstance(disk_at_start, str):
            return self._envelope("limit", started, error=disk_at_start)
        self.memory.begin_call()
        reply: dict[str, Any] | None = None
        try:
            write_frame(self._request_fd, {**message, "marker": f"\x00{marker}\x00", "nonce": nonce})
            reply = self._await_reply(deadline, disk_at_start)
        except FrameTimeout:
            self.stop()
            # The last measurement ran while the code still wrote: measured again now that nothing
            # does, a folder over the cap is the disk limit's, never a plain timeout (the next call
            # would take it as its allowed start).
            over = self._quota.over(disk_at_start)
            if over is not None:
                return self._envelope("limit", started, error=f"{over}; the process was killed at the "
                                      f"wall-clock limit of {self.limits.wall_s:g} s")
            error = f"wall-clock limit of {self.limits.wall_s:g} s exceeded; the process was killed"
            return self._envelope("timeout", started, error=error)
        except _OverQuota as exc:
            self.stop()
            return self._envelope("limit", started, error=f"{exc}; the process was killed")
        except ProtocolError as exc:
            self.stop()
            return self._envelope(
                "crash", started, error=f"the sandboxed process broke the reply protocol: {exc}"
            )
        except OSError:
            reply = None  # The child is gone (broken pipe); its exit status says why.
        if reply is None:
            return self._over_memory(started) or self._died(started)
        for stream in (self._stdout, self._stderr):
            stream.wait_for_marker(_MARKER_GRACE_S)
        problem = _reply_problem(reply, nonce)
        if problem is not None:
            self.stop()
            return self._envelope("crash", started, error=f"the sandbox sent an invalid reply: {problem}")
        over = self._quota.over(disk_at_start)
        if over is not None:
            self.stop()
            return self._envelope("limit", started, error=over)
        return self._over_memory(started) or self._from_reply(reply, started)

    def _over_memory(self, started: float) -> Envelope | None:
        """A ``limit`` envelope (the sandbox stopped) when the call went over the memory budget: a
        process of the tree the kernel killed for it is the budget's doing, whatever else the
        call reported."""
        over = self.memory.over()
        if over is None:
            return None
        self.stop()
        return self._envelope("limit", started, error=f"{over}; the process was killed")

    def _await_reply(self, deadline: float, disk_at_start: Usage) -> dict[str, Any] | None:
        """Wait for the reply frame, measuring the work folder and the memory while the call runs,
        each at its own interval: the memory supervisor's is far shorter than a walk of the folder.

        Raises:
            FrameTimeout: The wall limit passed.
            _OverQuota: The work folder went over the disk quota, or the sandbox over its memory budget.
        """
        poller = select.poll()
        poller.register(self._reply_fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        now = time.monotonic()
        disk_due = now + self._quota.interval_s
        memory_due = now + (self.memory.interval_s or self._quota.interval_s)
        while True:
            now = time.monotonic()
            if now >= deadline:
                raise FrameTimeout("no reply before the wall-clock limit")
            if poller.poll(max(0.0, min(deadline, disk_due, memory_due) - now) * 1000.0):
                return read_frame(self._reply_fd, max_bytes=self.limits.result_bytes + _REPLY_OVERHEAD_BYTES,
                                  deadline=deadline)
            now = time.monotonic()
            over = None
            if now >= disk_due:
                over = self._quota.over(disk_at_start)
                disk_due = time.monotonic() + self._quota.interval_s
            if over is None and now >= memory_due:
                over = self.memory.over()
                interval_s = self.memory.interval_s  # None: a cgroup's count, read along with the disk
                memory_due = disk_due if interval_s is None else time.monotonic() + interval_s
            if over is not None:
                raise _OverQuota(over)

    def _from_reply(self, reply: dict[str, Any], started: float) -> Envelope:
        status = reply["status"]
        if status == "exited":
            return self._over_memory(started) or self._runner_ended(int(reply["returncode"]), started)
        if status == "crash":
            self.stop()
            return self._envelope("crash", started, error=reply.get("error"))
        result = None
        if status == "ok" and "result_json" in reply:
            try:
                result = json.loads(reply["result_json"])
            # The sandboxed process is the agent's: it can send 100,000 brackets (RecursionError)
            # or a 10,000-digit integer (a bare ValueError), not only malformed JSON. NaN stays
            # readable: json.dumps writes it for a float result.
            except (TypeError, ValueError, RecursionError) as exc:
                self.stop()
                return self._envelope(
                    "crash", started, error=f"the sandboxed process sent a malformed result: {exc}"
                )
        if status == "memory":
            # The interpreter survived a MemoryError but may be in a bad state: start afresh.
            self.stop()
        return self._envelope(
            status, started, result=result, error=reply.get("error"), traceback=reply.get("traceback")
        )

    def _runner_ended(self, returncode: int, started: float) -> Envelope:
        """The process running the code died during the call (``returncode`` as `subprocess` gives it)."""
        self.stop()
        status, error = self._classify(-returncode if returncode < 0 else 0, returncode)
        return self._envelope(status, started, error=error, exit_code=returncode)

    def _classify(self, signum: int, code: int) -> tuple[Status, str]:
        if signum == signal.SIGXCPU:
            return "timeout", f"CPU time limit of {self.limits.cpu_s} s exceeded"
        if signum in _CRASH_SIGNALS:
            return "crash", f"the interpreter crashed with {_signal_name(signum)} ({signum})"
        if signum:
            return "killed", f"the process was killed by {_signal_name(signum)} ({signum})"
        return "crash", f"the interpreter exited with code {code} before finishing the call"

    def _died(self, started: float) -> Envelope:
        """The supervisor closed its reply pipe: classify from its exit status."""
        try:
            code = self._popen.wait(timeout=_EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            self.stop()
            return self._envelope(
                "crash", started, error="the sandboxed process closed its reply pipe and hung"
            )
        self.stop()
        # bwrap reports a child killed by signal N as exit status 128 + N.
        signum = -code if code < 0 else code - 128 if self.backend == "bwrap" and code > 128 else 0
        status, error = self._classify(signum, code)
        return self._envelope(status, started, error=error, exit_code=-signum if signum else code)

    def _envelope(
        self, status: Status, started: float, *, exit_code: int | None = None, **fields: Any
    ) -> Envelope:
        if not self._alive:
            # Output written just before the end is still in the pipes: let the readers finish.
            self._stdout.join(_MARKER_GRACE_S)
            self._stderr.join(_MARKER_GRACE_S)
        out, err = self._stdout.take(), self._stderr.take()
        if self._alive:
            self.memory.over()  # a last sample for the peak (a stopped sandbox took its last)
        return Envelope(
            status=status,
            stdout=out.text,
            stderr=err.text,
            stdout_truncated=out.truncated,
            stderr_truncated=err.truncated,
            duration_s=time.monotonic() - started,
            exit_code=exit_code,
            isolation=self.backend,
            memory_peak_mb=round(self.memory.peak_bytes / (1024 * 1024), 1),
            **fields,
        )

    def stop(self) -> None:
        """Kill the child (and everything it started) and give the work folder back."""
        if not self._alive:
            return
        self._alive = False
        for fd in (self._request_fd, self._reply_fd):
            os.close(fd)
        self._finalizer()
        if self._plan.sandbox_uid is not None:
            _sweep_uid(self._plan.sandbox_uid)
            hand_over(self._workdir, os.geteuid(), os.getegid())
        self.memory.close()
