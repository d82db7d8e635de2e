"""A seccomp filter for bwrap's ``--seccomp``: no new user namespaces inside the sandbox.

The sandbox uid may create a user namespace where the kernel allows unprivileged ones, and gets
every capability there: mounts of its own, and the kernel's namespace code as attack surface
(the source of many privilege escalations). Nothing sandboxed code legitimately does needs one.
The filter fails ``unshare`` and ``clone`` with ``CLONE_NEWUSER`` (``EPERM``) and ``clone3``,
whose flags sit in memory a filter cannot read, with ``ENOSYS``: the C library then falls back
to ``clone`` for threads and processes. A system call of another ABI (32-bit ``int 0x80``, x32)
gets ``ENOSYS`` too, so the check cannot be stepped around.
"""

from __future__ import annotations

import errno
import platform
import struct

__all__ = ["program"]

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6].
_NR, _ARCH, _ARG0_LOW = 0, 4, 16
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_CLONE_NEWUSER = 0x10000000
_X32_BIT = 0x40000000
# machine -> (AUDIT_ARCH_*, clone, unshare, clone3)
_SYSCALLS = {
    "x86_64": (0xC000003E, 56, 272, 435),
    "aarch64": (0xC00000B7, 220, 97, 435),
}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter as bwrap reads it (``struct sock_filter`` in native byte order), or None on a
    machine whose system call numbers are not listed here (no filter, as before)."""
    numbers = _SYSCALLS.get(machine or platform.machine())
    if numbers is None:
        return None
    arch, clone, unshare, clone3 = numbers
    deny, nosys = _ERRNO | errno.EPERM, _ERRNO | errno.ENOSYS
    ops = [
        _op(_LD_W_ABS, _ARCH),                        # 0
        _op(_JEQ_K, arch, 0, 9),                      # 1: another ABI -> 11
        _op(_LD_W_ABS, _NR),                          # 2
        _op(_JGE_K, _X32_BIT, 7, 0),                  # 3: x32 -> 11
        _op(_JEQ_K, clone3, 6, 0),                    # 4: -> 11
        _op(_JEQ_K, unshare, 1, 0),                   # 5: -> 7
        _op(_JEQ_K, clone, 0, 2),                     # 6: else -> 9
        _op(_LD_W_ABS, _ARG0_LOW),                    # 7: the flags (their low 32 bits)
        _op(_JSET_K, _CLONE_NEWUSER, 1, 0),           # 8: -> 10
        _op(_RET_K, _ALLOW),                          # 9
        _op(_RET_K, deny),                            # 10
        _op(_RET_K, nosys),                           # 11
    ]
    return b"".join(ops)
