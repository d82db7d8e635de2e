"""The supervisor inside the sandbox: ``python -m buildbench.sandbox._child REQ_FD REPLY_FD [PARENT_PID]``.

It reads requests from the parent on ``REQ_FD`` and answers on ``REPLY_FD`` (see
`_protocol`), but never runs user code itself. On ``setup`` it forks a *runner* (see
`_session`) that holds neither of those descriptors, only two pipes to the supervisor; the
runner applies the resource limits, builds the namespace and runs every ``exec`` request in
it, so variables persist across calls. The supervisor makes itself non-dumpable before the
fork: code in the runner, though it runs as the same uid, cannot reopen the reply pipe
through ``/proc/PID/fd``, ptrace the supervisor or read its memory.

Each request to the runner carries a fresh token the runner echoes in its report; a frame
the code writes to the report pipe by itself (it can find the descriptor) lacks it, so the
call ends as ``crash`` instead of passing a forged result on. Code that digs the token out of
the runner's own memory can still write a report: that is no more than it could do by
changing the runner's functions, which it can too.

What the supervisor vouches for: the reply belongs to this request (it echoes the request's
nonce, which the runner never sees), how the runner ended (its exit status, read with
``waitpid``), the call's CPU budget (the runner and what its setup started, read from
``/proc``: the runner could lift its own soft RLIMIT_CPU or ignore SIGXCPU), where the
request's output ends (the end marker, which the runner never sees either), and the reply's
shape and sizes. What it cannot vouch for is the runner's report of a call that finished
(``ok``/``error``/``memory``, the result, the error text): that comes from the process the
user's code controlled, so it is user data, bounded and checked but not trusted.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

from buildbench.sandbox._prctl import become_subreaper, die_with_parent, set_dumpable
from buildbench.sandbox._protocol import FrameTimeout, ProtocolError, field_problem, read_frame, write_frame
from buildbench.sandbox._session import serve as serve_runner

# Not `typing.TYPE_CHECKING`: importing typing would cost every sandboxed child's start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Reply = dict[str, Any]

_MAX_REQUEST_BYTES = (1 << 31) - 1
# Room in a report beyond the result itself (error text, traceback).
_REPORT_OVERHEAD_BYTES = 1_000_000
# Once the first byte of a report is there, the rest follows at pipe speed.
_REPORT_GRACE_S = 10.0
# Longest the supervisor keeps killing a call's leftover processes before answering.
_SWEEP_S = 5.0
_MAX_ERROR_CHARS = 5_000
_MAX_TRACEBACK_CHARS = 50_000
_REPORT_FIELDS: dict[str, tuple[type, ...]] = {"status": (str,), "result_json": (str, type(None)),
                                               "error": (str, type(None)), "traceback": (str, type(None))}
# How often the supervisor looks at the runner's CPU time during a call, and what it allows
# beyond the call's budget (the runner's own RLIMIT_CPU rounds up to whole seconds).
_CPU_POLL_S = 0.1
_CPU_SLACK_S = 1.0
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[: limit // 2]}\n... [cut] ...\n{text[-limit // 2:]}"


def checked_report(report: dict[str, Any], result_bytes: int) -> Reply:
    """The runner's report reduced to the fields and sizes a reply may carry.

    Raises:
        ProtocolError: An unknown field or status, a field of the wrong type, or an oversized result.
    """
    problem = field_problem(report, _REPORT_FIELDS)
    if problem is not None:
        raise ProtocolError(f"the runner's report is malformed: {problem}")
    if report.get("status") not in ("ok", "error", "memory"):
        raise ProtocolError(f"the runner reported an unknown status {report.get('status')!r}")
    if len(report.get("result_json") or "") > result_bytes:
        raise ProtocolError(f"the runner's result is over the {result_bytes}-byte limit")
    reply = {"status": report["status"]}
    if report.get("result_json") is not None:
        reply["result_json"] = report["result_json"]
    for key, limit in (("error", _MAX_ERROR_CHARS), ("traceback", _MAX_TRACEBACK_CHARS)):
        if report.get(key) is not None:
            reply[key] = _clip(report[key], limit)
    return reply


def _processes() -> dict[int, tuple[int, bool]]:
    """Every process this one can see: its parent's pid and whether it is still alive (not a zombie)."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1:
            found[int(name)] = (int(fields[1]), fields[0] not in (b"Z", b"X"))
    return found


def descendants(root: int) -> set[int]:
    """Live processes below ``root`` (children, theirs, ...), ``root`` itself excluded. A dead
    parent not yet reaped still links its children to the tree (they are orphaned a moment later)."""
    processes = _processes()
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, (parent, _) in processes.items() if parent in frontier} - found
        found |= frontier
    return {pid for pid in found if processes[pid][1]}


def _namespace_pids() -> set[int]:
    """Live processes of this PID namespace other than its init and this supervisor."""
    return {pid for pid, (_, alive) in _processes().items() if alive} - {1, os.getpid()}


def _sandbox_pids(own_namespace: bool) -> set[int]:
    """The processes of this sandbox besides the supervisor: its PID namespace where it has
    one, else its descendants (a subreaper, it keeps daemons that left their session)."""
    return _namespace_pids() if own_namespace else descendants(os.getpid())


def _reap_orphans(runner: int) -> None:
    """Collect the exit status of orphans re-parented here (a subreaper), never the runner's."""
    for pid in _children(os.getpid()) - {runner}:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue


def _children(root: int) -> set[int]:
    """Direct children of ``root``, zombies included (empty where /proc does not list them)."""
    found: set[int] = set()
    try:
        for tid in os.listdir(f"/proc/{root}/task"):
            with open(f"/proc/{root}/task/{tid}/children") as f:
                found.update(int(pid) for pid in f.read().split())
    except OSError:
        pass
    return found


def _signal_all(pids: set[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


class _Runner:
    """The forked process that runs user code, and the supervisor's two pipes to it.

    Between two requests the runner, and the processes its setup started (Blender), are
    stopped with SIGSTOP: a thread or child the code left behind cannot write to the work
    folder, or anywhere, while nobody measures it. In a PID namespace of its own (bwrap), every
    other process the code started (a daemon, a forgotten child) is killed when the call ends.
    """

    def __init__(self, parent_fds: tuple[int, int]) -> None:
        request_read, self.request_fd = os.pipe()
        self.report_fd, report_write = os.pipe()
        supervisor = os.getpid()
        pid = os.fork()
        if pid == 0:
            try:
                for fd in (*parent_fds, self.request_fd, self.report_fd):
                    os.close(fd)
                die_with_parent(supervisor)
                # Only the supervisor stays closed to its own uid; the runner is an ordinary process.
                set_dumpable(True)
                serve_runner(request_read, report_write)
            finally:
                os._exit(1)
        os.close(request_read)
        os.close(report_write)
        self.pid = pid
        self.pidfd = os.pidfd_open(pid)
        self.result_bytes = 10_000_000
        self.cpu_s = 30.0
        self.kept = {pid}

    def settle(self, *, own_namespace: bool, after_setup: bool) -> None:
        """End the call's stray processes (keeping those the setup started) and stop the rest."""
        if after_setup:
            self.kept = _sandbox_pids(own_namespace) | {self.pid}
        else:
            # A stray may fork while being killed, and a killed one lives on for a moment:
            # repeat until none is left (RLIMIT_NPROC bounds how many there can be). One scan
            # can miss a child forked after /proc was listed by a parent that died before its
            # state was read, so "none" counts only when a second scan finds none either.
            deadline = time.monotonic() + _SWEEP_S
            quiet = 0
            while quiet < 2 and time.monotonic() < deadline:
                strays = _sandbox_pids(own_namespace) - self.kept
                quiet = 0 if strays else quiet + 1
                _signal_all(strays, signal.SIGKILL)
                time.sleep(0.001)
            _reap_orphans(self.pid)
        _signal_all(self.kept, signal.SIGSTOP)

    def resume(self) -> None:
        _signal_all(self.kept, signal.SIGCONT)

    def ask(self, message: dict[str, Any]) -> Reply:
        """Forward one request and wait for the report, or for the runner's end."""
        if select.select([self.report_fd], [], [], 0)[0]:
            return self._broken("the code wrote to the runner's report pipe between calls")
        # os.urandom rather than secrets: importing secrets costs every sandbox ~10 ms of start-up.
        token = os.urandom(16).hex()
        try:
            write_frame(self.request_fd, {**message, "token": token})
        except BrokenPipeError:
            return self._exited()
        budget = self._cpu_seconds() + self.cpu_s + _CPU_SLACK_S
        while not (ready := select.select([self.report_fd, self.pidfd], [], [], _CPU_POLL_S)[0]):
            if self._cpu_seconds() > budget:
                # RLIMIT_CPU's hard limit is unlimited, so the code can lift the soft one it is
                # given (or ignore SIGXCPU): the supervisor ends it as the kernel would have.
                self.kill()
                return {"status": "exited", "returncode": -signal.SIGXCPU}
        if self.pidfd in ready:
            return self._exited()
        try:
            report = read_frame(self.report_fd, max_bytes=self.result_bytes + _REPORT_OVERHEAD_BYTES,
                                deadline=time.monotonic() + _REPORT_GRACE_S)
            if report is None:
                return self._exited()
            if report.pop("token", None) != token:
                return self._broken("the runner sent a report that does not answer this request")
            return checked_report(report, self.result_bytes)
        except (ProtocolError, FrameTimeout) as exc:
            return self._broken(f"the runner broke the report protocol: {exc}")

    def _cpu_seconds(self) -> float:
        """CPU seconds the runner and the processes its setup started (Blender) have used so far."""
        total = 0
        for pid in self.kept:
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
            except (OSError, IndexError, ValueError):
                continue
        return total / _CLOCK_TICKS

    def _broken(self, why: str) -> Reply:
        self.kill()
        return {"status": "crash", "error": why}

    def _exited(self) -> Reply:
        """The runner ended: wait for it and pass on its exit status (negative: the signal)."""
        _, status = os.waitpid(self.pid, 0)
        return {"status": "exited", "returncode": os.waitstatus_to_exitcode(status)}

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def _end_output(marker: bytes) -> None:
    """Write the end marker to stdout and stderr: the runner's output of this request is all before it."""
    for fd in (1, 2):
        try:
            os.write(fd, marker)
        except OSError:
            pass


def serve(request_fd: int, reply_fd: int) -> None:
    """Answer requests until the parent closes the request pipe or the runner ends."""
    runner: _Runner | None = None
    own_namespace = False
    while True:
        request = read_frame(request_fd, max_bytes=_MAX_REQUEST_BYTES)
        if request is None:
            return
        nonce, marker = request.pop("nonce"), request.pop("marker")
        setup = request["op"] == "setup"
        if setup:
            if runner is not None:
                runner.kill()
            own_namespace = bool(request.pop("own_pid_namespace", False))
            runner = _Runner((request_fd, reply_fd))
            runner.result_bytes = int(request["limits"]["result_bytes"])
            runner.cpu_s = float(request["limits"]["cpu_s"])
        if runner is None:
            reply: Reply = {"status": "crash", "error": "an exec request came before setup"}
        else:
            runner.resume()
            reply = runner.ask(request)
            if reply["status"] not in ("exited", "crash"):
                runner.settle(own_namespace=own_namespace, after_setup=setup)
        _end_output(marker.encode("ascii"))
        write_frame(reply_fd, {**reply, "nonce": nonce})
        if reply["status"] in ("exited", "crash"):
            return


def main(argv: list[str]) -> int:
    """Entry point: ``argv`` is ``[prog, request_fd, reply_fd]`` plus, outside bwrap, the parent's pid."""
    if len(argv) not in (3, 4):
        print("usage: python -m buildbench.sandbox._child REQUEST_FD REPLY_FD [PARENT_PID]", file=sys.stderr)
        return 2
    # Under bwrap the PID namespace ends with the harness; a plain process needs the kernel's help,
    # and keeps the processes the code starts in its tree (a daemon leaving its session too).
    die_with_parent(int(argv[3]) if len(argv) == 4 else None)
    if len(argv) == 4:
        become_subreaper()
    set_dumpable(False)
    serve(int(argv[1]), int(argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
