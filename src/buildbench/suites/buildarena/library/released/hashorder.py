"""The order in which the released library listed a set of strings or string pairs, as recorded.

The released library collected control keys (and trimesh the overlapping
collider pairs) into a Python ``set`` and listed them in the set's iteration
order, which follows their hashes. That
order changed from one process to the next (hash randomisation); our oracle
recordings were made with ``PYTHONHASHSEED=0`` (CPython 3.12), which fixes
it. ``set_order`` reproduces that order in any process: string hashes are
SipHash-1-3 with an all-zero key (what ``PYTHONHASHSEED=0`` selects) over
the string's bytes, a tuple's hash is CPython's xxHash-style mix of its
items' hashes, and a set is an open-addressing table of 8 slots or more
(linear runs of up to 10 slots, then a perturbed jump; grown to the smallest
power of two above four times the entries once three fifths are filled)
listed slot by slot.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

Item = TypeVar("Item", str, tuple[str, ...])

_MASK64 = (1 << 64) - 1
_LINEAR_PROBES = 9
_PERTURB_SHIFT = 5
_MIN_SIZE = 8
_XXPRIME_1 = 11400714785074694791
_XXPRIME_2 = 14029467366897019727
_XXPRIME_5 = 2870177450012600261


def _rotl(x: int, bits: int) -> int:
    return ((x << bits) | (x >> (64 - bits))) & _MASK64


def _round(v0: int, v1: int, v2: int, v3: int) -> tuple[int, int, int, int]:
    v0 = (v0 + v1) & _MASK64
    v2 = (v2 + v3) & _MASK64
    v1 = _rotl(v1, 13) ^ v0
    v3 = _rotl(v3, 16) ^ v2
    v0 = _rotl(v0, 32)
    v2 = (v2 + v1) & _MASK64
    v0 = (v0 + v3) & _MASK64
    v1 = _rotl(v1, 17) ^ v2
    v3 = _rotl(v3, 21) ^ v0
    v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def siphash13(data: bytes, k0: int = 0, k1: int = 0) -> int:
    """SipHash-1-3 of ``data`` (unsigned 64-bit)."""
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573
    full = len(data) - len(data) % 8
    for start in range(0, full, 8):
        m = int.from_bytes(data[start:start + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = _round(v0, v1, v2, v3)
        v0 ^= m
    last = ((len(data) & 0xFF) << 56) | int.from_bytes(data[full:], "little")
    v3 ^= last
    v0, v1, v2, v3 = _round(v0, v1, v2, v3)
    v0 ^= last
    v2 ^= 0xFF
    for _ in range(3):
        v0, v1, v2, v3 = _round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def string_hash(text: str) -> int:
    """``hash(text)`` of CPython under ``PYTHONHASHSEED=0``, as an unsigned 64-bit number."""
    if not text:
        return 0
    width = 1 if max(map(ord, text)) < 256 else 2 if max(map(ord, text)) < 65536 else 4
    data = text.encode("latin-1") if width == 1 else text.encode("utf-16-le" if width == 2 else "utf-32-le")
    value = siphash13(data)
    return value - 1 if value == _MASK64 else value  # -1 is reserved: CPython answers -2


def object_hash(item: str | tuple[str, ...]) -> int:
    """``hash(item)`` of CPython 3.12 under ``PYTHONHASHSEED=0`` for a string or a tuple of strings (unsigned)."""
    if isinstance(item, str):
        return string_hash(item)
    acc = _XXPRIME_5
    for part in item:
        acc = (acc + object_hash(part) * _XXPRIME_2) & _MASK64
        acc = _rotl(acc, 31)
        acc = (acc * _XXPRIME_1) & _MASK64
    acc = (acc + (len(item) ^ (_XXPRIME_5 ^ 3527539))) & _MASK64
    return 1546275796 if acc == _MASK64 else acc


def _place(table: list[Item | None], hashes: list[int], key: Item, value: int) -> None:
    mask = len(table) - 1
    i, perturb = value & mask, value
    while True:
        run = _LINEAR_PROBES + 1 if i + _LINEAR_PROBES <= mask else 1
        for slot in range(i, i + run):
            if table[slot] is None:
                table[slot], hashes[slot] = key, value
                return
        perturb >>= _PERTURB_SHIFT
        i = (i * 5 + 1 + perturb) & mask


def set_order(items: Iterable[Item]) -> list[Item]:
    """The distinct ``items`` in the iteration order of a set they were added to in this order
    (CPython 3.12, ``PYTHONHASHSEED=0``)."""
    table: list[Item | None] = [None] * _MIN_SIZE
    hashes = [0] * _MIN_SIZE
    seen: set[Item] = set()
    for key in items:
        if key in seen:
            continue
        seen.add(key)
        _place(table, hashes, key, object_hash(key))
        if len(seen) * 5 >= (len(table) - 1) * 3:
            size = _MIN_SIZE
            while size <= len(seen) * 4:
                size <<= 1
            old = [(k, h) for k, h in zip(table, hashes, strict=True) if k is not None]
            table, hashes = [None] * size, [0] * size
            for k, h in old:
                _place(table, hashes, k, h)
    return [key for key in table if key is not None]
