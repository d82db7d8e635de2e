"""Running untrusted (agent-written) Python away from the harness process.

`run_code` runs a snippet once in a fresh sandboxed process; `Worker` keeps one
sandboxed process (and its namespace) across many calls. Both return an `Envelope`
whose ``status`` is one of ``ok | error | timeout | memory | killed | crash``.

Isolation, chosen with ``isolation="auto" | "bwrap" | "process"``:

- bwrap (bubblewrap), used when it works: no network; the host filesystem
  read-only except one work folder; private ``/tmp``, ``/dev/shm``, ``/run`` and
  PID namespace; an environment built from an allow-list (no API keys or tokens);
  as root, a fresh unprivileged uid (so RLIMIT_NPROC bounds processes and threads,
  and root-only files such as ``/root`` stay unreadable). Every process of the
  sandbox is killed when it ends.
- process: a plain subprocess in its own session with the same environment and
  rlimits, but no filesystem, network or pid isolation. ``auto`` falls back to it
  with a single logged warning per process; `sandbox_available` says which is used.

Limits (`Limits`): wall clock per call (the parent kills the process), CPU per call
(RLIMIT_CPU: SIGXCPU -> ``timeout``), address space (RLIMIT_AS: ``MemoryError`` ->
``memory``), processes (RLIMIT_NPROC under bwrap: a fork bomb gets ``BlockingIOError``
-> ``error``, or runs into the wall limit -> ``timeout`` if it swallows that), and
stdout/stderr bytes kept per call (the rest is read and dropped).

The parent and the child talk over two dedicated pipes with length-prefixed JSON
frames; the user's stdout and stderr are separate pipes.
"""

from __future__ import annotations

import importlib

# Not `typing.TYPE_CHECKING`: importing typing would cost every sandboxed child's start-up.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from buildbench.sandbox._launch import SandboxUnavailable
    from buildbench.sandbox._types import Envelope, Isolation, Limits, SetupResult, Status
    from buildbench.sandbox._worker import IsolationInfo, Worker, run_code, sandbox_available

# The sandboxed child imports this package on every start, so nothing is imported
# eagerly here: each public name loads its module on first use, which keeps the
# child's start-up short.
_LAZY = {
    "Envelope": "_types",
    "Isolation": "_types",
    "Limits": "_types",
    "SetupResult": "_types",
    "Status": "_types",
    "SandboxUnavailable": "_launch",
    "IsolationInfo": "_worker",
    "Worker": "_worker",
    "run_code": "_worker",
    "sandbox_available": "_worker",
}

__all__ = [
    "Envelope",
    "Isolation",
    "IsolationInfo",
    "Limits",
    "SandboxUnavailable",
    "SetupResult",
    "Status",
    "Worker",
    "run_code",
    "sandbox_available",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
