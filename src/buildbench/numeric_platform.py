"""The class of CPU a floating-point result was computed on.

numpy's SIMD kernels (its transcendental functions on AVX-512, for one) and OpenBLAS (its
matrix kernels and blocking) choose their code by the CPU they run on, and different code
rounds differently in the last bits. The same seed therefore gives the same verdicts on every
machine, but not always the same bits: a BIM-Edit geometry score 0.82145194814699**43** on one
CPU class is …44 on another, a DreamHouse rafter's rotation differs by one ulp. Run manifests
record this string beside the package versions, so two runs that differ in such bits can be
told apart from a change of code; the snapshot tests key the exact bits they pin by it.
"""

from __future__ import annotations

import functools
import platform
from pathlib import Path

# numpy's dispatch levels, highest first: the level decides which kernels run.
_SIMD_LEVELS = ("X86_V4", "X86_V3", "X86_V2", "ASIMD", "NEON", "VSX4", "VSX3", "VSX2", "VX")


@functools.cache
def numeric_platform() -> str:
    """``"<machine> <vendor> <numpy SIMD level>"``, e.g. ``"x86_64 AuthenticAMD X86_V3"``.

    The vendor matters because OpenBLAS picks its kernels and block sizes per vendor and
    family, not only by instruction set.
    """
    return f"{platform.machine() or 'unknown'} {_vendor()} {_simd_level()}"


def _simd_level() -> str:
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # a numpy without the private table: the level is unknown, not guessed
        return "simd-unknown"
    return next((level for level in _SIMD_LEVELS if features.get(level)), "baseline")


def _vendor() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return platform.processor() or "vendor-unknown"
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("vendor_id", "CPU implementer"):
            return value.strip() or "vendor-unknown"
    return "vendor-unknown"
