"""Sandboxed code could create a user namespace (the kernel allows unprivileged ones here) and get
every capability in it: mounts of its own and the kernel's namespace code as attack surface. bwrap
now applies a seccomp filter (`buildbench.sandbox._seccomp`) that refuses ``CLONE_NEWUSER`` in
``unshare`` and ``clone``, and ``clone3`` (the C library falls back to ``clone``)."""

from __future__ import annotations

import platform

import pytest

from buildbench.sandbox import Limits, run_code
from buildbench.sandbox._seccomp import program

from .conftest import needs_bwrap

PROBE = r"""
import ctypes, os, threading, subprocess
libc = ctypes.CDLL(None, use_errno=True)
seen = {}
def attempt(name, call):
    pid = os.fork()
    if pid == 0:  # in a child: a namespace made here must not change the runner
        os._exit(0 if call() == 0 else 100 + ctypes.get_errno())
    seen[name] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
attempt('unshare', lambda: libc.unshare(0x10000000))
attempt('clone', lambda: libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0))  # x86_64 clone(NEWUSER|SIGCHLD)
attempt('clone3', lambda: libc.syscall(435, 0, 0))
box = []
thread = threading.Thread(target=box.append, args=('thread',))
thread.start()
thread.join()
seen['thread'] = box
seen['subprocess'] = subprocess.run(['true']).returncode
result = seen
"""


@needs_bwrap
@pytest.mark.skipif(program() is None, reason="no seccomp filter for this machine's system calls")
def test_no_user_namespace_can_be_made_inside() -> None:
    out = run_code(PROBE, limits=Limits(wall_s=20.0, cpu_s=20, memory_mb=512), isolation="bwrap")
    assert out.status == "ok", out
    assert out.result["unshare"] == 101  # EPERM
    if platform.machine() == "x86_64":
        assert out.result["clone"] == 101
    assert out.result["clone3"] == 138  # ENOSYS: the C library falls back to clone
    assert out.result["thread"] == ["thread"] and out.result["subprocess"] == 0


def test_the_filter_covers_known_machines_only() -> None:
    assert program("x86_64") is not None and len(program("x86_64") or b"") % 8 == 0
    assert program("aarch64") is not None
    assert program("mips") is None
