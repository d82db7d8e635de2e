"""Value types shared by the sandbox parent and child: limits, envelope, setup result."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["ok", "error", "timeout", "memory", "limit", "killed", "crash"]
"""How a sandboxed call ended.

- ``ok``: the code ran to the end and its ``result`` was JSON-serialisable.
- ``error``: the code (or the setup hook) raised; also a syntax error, a
  ``SystemExit`` with a non-zero code, or a ``result`` that is not JSON-serialisable.
- ``timeout``: the wall-clock or CPU time limit was reached.
- ``memory``: ``MemoryError`` (the address-space limit) was hit.
- ``limit``: the work folder went over the disk quota (``Limits.disk_mb``, ``disk_entries``), or the whole
  sandbox over its memory budget (``Limits.memory_mb``); the process was stopped (its state
  is lost), what it wrote stays in the folder, and ``error`` starts with the limit's name.
- ``killed``: the process died from a signal the sandbox did not send for time or
  memory (SIGKILL from the OOM killer, SIGTERM from outside, ...).
- ``crash``: the interpreter died by itself (segfault, abort, ``os._exit``) or broke
  the parent/child protocol.
"""

Isolation = Literal["auto", "bwrap", "process"]
"""Backend request: ``bwrap`` (bubblewrap namespaces), ``process`` (plain subprocess with
rlimits) or ``auto`` (bwrap when it works on this machine, else process)."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one sandboxed process and for each call made in it.

    Attributes:
        wall_s: Wall-clock seconds allowed for each call (and for the setup hook).
        cpu_s: CPU seconds allowed for each call, per process (RLIMIT_CPU), and for the process
            running the code together with those its setup started (the supervisor watches them:
            code that lifts its own limit or ignores SIGXCPU still ends with ``timeout``).
        memory_mb: The sandbox's memory budget in MiB: all its processes together and what its
            private ``/tmp`` and ``/dev/shm`` hold (a cgroup, or a supervisor that kills the tree at
            the limit: status ``limit``, see `buildbench.sandbox._memory`); each tmpfs holds at
            most half of it, and each process's address space is capped at it (RLIMIT_AS:
            ``MemoryError`` -> ``memory``).
        max_processes: Processes *and threads* the sandboxed user may hold at once
            (RLIMIT_NPROC under a private uid; only enforced by the bwrap backend).
        output_bytes: Bytes of stdout and of stderr kept per call; the rest is read
            and dropped.
        result_bytes: Largest serialised ``result`` accepted, in bytes.
        disk_mb: Work-folder quota in MiB: no file may grow past it (RLIMIT_FSIZE: the write
            fails with ``OSError: File too large``), and a call that leaves (or, measured every
            0.1 s or so while it runs, makes) the folder hold more ends with status ``limit``.
            A folder already over the quota when a call starts may shrink, not grow. The
            private ``/tmp`` is memory, counted in ``memory_mb``.
        disk_entries: The most files, folders and links the work folder may hold, checked like
            ``disk_mb`` (status ``limit``); far above what real work leaves (tens). It bounds
            the work of measuring: a call does not start (status ``limit``, the code not run)
            in a folder holding more than four times it, as the agent's own code can make one.
    """

    wall_s: float = 30.0
    cpu_s: int = 30
    memory_mb: int = 2048
    max_processes: int = 64
    output_bytes: int = 1_000_000
    result_bytes: int = 10_000_000
    disk_mb: int = 2048
    disk_entries: int = 10_000

    def __post_init__(self) -> None:
        for name in ("wall_s", "cpu_s", "memory_mb", "max_processes", "output_bytes", "result_bytes", "disk_mb",
                     "disk_entries"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive number, got {value!r}")
        if self.memory_mb < 64:
            raise ValueError(
                f"Limits.memory_mb must be at least 64 (a Python interpreter needs it), got {self.memory_mb}"
            )


@dataclass(frozen=True)
class Envelope:
    """The outcome of one sandboxed call.

    Attributes:
        status: How the call ended (see `Status`).
        result: The JSON value left in the variable ``result`` (or returned by the
            setup's collect hook); None when absent or when the call failed.
        stdout: What the code printed to stdout, capped at ``Limits.output_bytes``.
        stderr: What the code printed to stderr, capped likewise.
        error: ``"ExcType: message"`` or a sentence saying what stopped the call;
            None when ``status == "ok"``.
        traceback: The traceback of the user code only (harness frames trimmed), or
            None.
        duration_s: Wall-clock seconds the call took, seen from the parent (the
            request only: process start-up and the setup hook are not included).
        stdout_truncated: True when stdout went past the cap and was cut.
        stderr_truncated: True when stderr went past the cap and was cut.
        exit_code: The process exit status when it died during the call (negative:
            killed by that signal number), else None.
        worker_restarted: True when the call ran in a fresh process because the
            previous one died (timeout, crash, memory): earlier state is lost.
        isolation: The backend that ran the call, ``"bwrap"`` or ``"process"``.
        memory_peak_mb: The most memory the whole sandbox held during the call (all its processes
            and its ``/tmp`` and ``/dev/shm``), MiB: the cgroup's own record, or the highest of the
            supervisor's samples (see `buildbench.sandbox._memory`).
    """

    status: Status
    result: Any = None
    stdout: str = ""
    stderr: str = ""
    error: str | None = None
    traceback: str | None = None
    duration_s: float = 0.0
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    exit_code: int | None = None
    worker_restarted: bool = False
    isolation: str = "process"
    memory_peak_mb: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the call finished normally."""
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        """Return the envelope as a JSON-serialisable dict."""
        return dataclasses.asdict(self)


@dataclass
class SetupResult:
    """What a setup hook may return instead of a plain globals dict.

    Attributes:
        globals: The namespace the user code runs in (kept across worker calls).
        collect: Called with that namespace after each call; its return value
            becomes ``Envelope.result`` instead of the variable ``result``. It runs in the
            process of the user code, which can change it or anything it reads: its value is
            data the code controls (checked for JSON, size and shape like ``result``), never
            proof of what the code did.
    """

    globals: dict[str, Any] = field(default_factory=dict)
    collect: Callable[[dict[str, Any]], Any] | None = None
