"""The ``prctl(2)`` settings the sandbox needs, through ctypes (the standard library has no prctl).

Imported by the sandboxed child on every start, so it imports nothing heavy.
"""

from __future__ import annotations

import ctypes
import os
import signal

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36

_libc = None


def _prctl(option: int, value: int) -> None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    if _libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl({option}, {value}): {os.strerror(errno)}")


def die_with_parent(expected_parent: int | None = None, signum: int = signal.SIGKILL) -> None:
    """Have the kernel send ``signum`` to this process when its parent ends.

    The signal follows the parent *thread* that forked this process. ``expected_parent``
    closes the race where the parent died before the call: if this process has already
    been handed to another parent, it exits at once.
    """
    _prctl(_PR_SET_PDEATHSIG, int(signum))
    if expected_parent is not None and os.getppid() != expected_parent:
        os._exit(1)


def set_dumpable(dumpable: bool) -> None:
    """Make this process (un)dumpable.

    A non-dumpable process's ``/proc/PID/fd``, ``/proc/PID/mem``, ptrace and
    ``pidfd_getfd`` are closed to other processes of the same uid, so code running as that
    uid cannot reopen or steal its descriptors.
    """
    _prctl(_PR_SET_DUMPABLE, 1 if dumpable else 0)


def become_subreaper() -> None:
    """Have orphaned descendants (a daemon that double-forked and called ``setsid``) re-parented
    to this process instead of init, so that they stay in its tree, to be found and killed."""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
