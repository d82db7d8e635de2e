"""Running untrusted (agent-written) Python away from the harness process.

`run_code` runs a snippet once in a fresh sandboxed process; `Worker` keeps one
sandboxed process (and its namespace) across many calls. Both return an `Envelope`
whose ``status`` is one of ``ok | error | timeout | memory | limit | killed | crash``.

Isolation, chosen with ``isolation="auto" | "bwrap" | "process"``:

- bwrap (bubblewrap), used when it works: no network; only the system folders, the
  interpreter and named paths visible, read-only, plus one writable work folder; of buildbench
  only ``buildbench.sandbox``, the setup hook's module and the ``modules`` a caller names (no
  task generator or verifier the code could ask for its ground truth); no user namespace of
  its own (a seccomp filter, `_seccomp`); private
  ``/tmp``, ``/dev/shm`` and PID namespace; an environment built from an allow-list (no API
  keys or tokens); as root, a fresh unprivileged uid (so RLIMIT_NPROC bounds processes and
  threads, and root-only files stay unreadable). Every process of the sandbox is killed
  when it ends.
- process: a plain subprocess in its own session with the same environment and rlimits,
  but no filesystem, network or pid isolation (its supervisor is a subreaper: what a call
  leaves running, daemons included, is still killed). Only on request: ``isolation="process"``,
  or ``auto`` where bwrap does not work *and* ``BUILDBENCH_ALLOW_UNSANDBOXED=1``; otherwise
  ``auto`` refuses with `SandboxUnavailable` (one line: what is missing, how to install it,
  how to opt in). `sandbox_available` says which backend ``auto`` finds.

Limits (`Limits`): wall clock per call (the parent kills the process), CPU per call
(RLIMIT_CPU: SIGXCPU -> ``timeout``), one memory budget for the whole sandbox, its processes
and its ``/tmp`` and ``/dev/shm`` together (a cgroup where the machine allows it, else a
supervisor that sums the tree; over it -> ``limit``, see `_memory`), address space per process
(RLIMIT_AS: ``MemoryError`` -> ``memory``), processes (RLIMIT_NPROC under bwrap: a fork bomb gets ``BlockingIOError``
-> ``error``, or runs into the wall limit -> ``timeout`` if it swallows that), the work
folder's size (RLIMIT_FSIZE plus measurements during and after each call -> ``limit``),
and stdout/stderr bytes kept per call (the rest is read and dropped).

Inside the sandbox a supervisor (`_child`) talks to the parent over two dedicated pipes
with length-prefixed JSON frames, and forks the runner (`_session`) that runs the user's
code. The runner holds no descriptor of the parent's pipes and cannot reopen them (the
supervisor is non-dumpable), so it cannot write a reply; the supervisor echoes a nonce per
request, reports the runner's exit status itself, and between calls stops the runner
(SIGSTOP) and kills any other process the call left (a daemon). What the runner reports
for a finished call (its result, or a collect hook's value) is data the user's code
controls; it is checked for shape and size, never trusted as more. The user's stdout and
stderr are separate pipes. `lifetime` makes pool workers die with the run and removes work
folders a killed run left behind.
"""

from __future__ import annotations

import importlib

# Not `typing.TYPE_CHECKING`: importing typing would cost every sandboxed child's start-up.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

    from buildbench.sandbox._launch import SandboxUnavailable
    from buildbench.sandbox._protocol import field_problem
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
    "field_problem": "_protocol",
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
    "field_problem",
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
