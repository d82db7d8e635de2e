"""Member check: every entry is a usable, well-named, uniquely named box.

Not one of the paper's ten tests, but the paper fails a structure whose names break the
taxonomy (Prompt 0 Part 3) and the README requires unique names. Members with unusable
geometry are reported here and left out of every other test; badly named members are
reported here and still take part in the geometric tests.
"""

from __future__ import annotations

import numpy as np

from ..model import PAPER_CATEGORIES, classify_many
from .context import Context
from .result import TestResult


def check_members(ctx: Context, *, strict_names: bool) -> TestResult:
    """Report non-finite, non-positive or non-rigid members, bad names and duplicates.

    Args:
        ctx: Shared validation context.
        strict_names: Paper rule (case-sensitive paper prefix); otherwise README keywords.
    """
    msgs: list[str] = []
    bad: list[int] = []
    names = ctx.names
    for i in np.flatnonzero(~ctx.finite).tolist():
        msgs.append(
            f"{_who(ctx, i)} has a non-finite or out-of-range (beyond ±{ctx.cfg.max_coordinate_m:g} m) "
            f"number in its size or transform"
        )
        bad.append(i)
    for i in np.flatnonzero(ctx.finite & ~ctx.positive).tolist():
        size = ", ".join(f"{v:g}" for v in ctx.s.sizes_m[i])
        msgs.append(f"{_who(ctx, i)} size ({size}) m must be at least {ctx.cfg.min_size_m:g} m on every axis")
        bad.append(i)
    for i in np.flatnonzero(ctx.finite & ctx.positive & ~ctx.rigid).tolist():
        msgs.append(f"{_who(ctx, i)} transform is not a rotation plus translation ({_why_not_rigid(ctx.s.matrices[i])})")
        bad.append(i)

    hint = "/".join(PAPER_CATEGORIES[:6]) + "…"
    blank = [] if all(map(str.strip, names)) else [i for i, name in enumerate(names) if not name.strip()]
    for i in blank:
        msgs.append(f"member #{i} has an empty name")
    if strict_names:
        strict = classify_many(names, strict=True)
        unnamed = [
            i for i, (name, cat) in enumerate(zip(names, strict, strict=True)) if cat is None and name.strip()
        ] if None in strict else []  # fmt: skip
        msgs += [
            f"{_who(ctx, i)} does not start with a member type (case-sensitive: {hint})" for i in unnamed
        ]
    else:
        unnamed = [int(i) for i in np.flatnonzero(ctx.codes < 0) if names[i].strip()]
        msgs += [f"{_who(ctx, i)} names no member type ({hint})" for i in unnamed]
    bad += blank + unnamed

    dupes: dict[str, list[int]] = {}
    if len(set(names)) < len(names):
        seen: dict[str, list[int]] = {}
        for i, name in enumerate(names):
            seen.setdefault(name, []).append(i)
        dupes = {n: idx for n, idx in seen.items() if len(idx) > 1 and n.strip()}
    for name, idx in dupes.items():
        where = ", ".join(f"#{k}" for k in idx[:5]) + (" …" if len(idx) > 5 else "")
        msgs.append(f"name {name!r} is used by {len(idx)} members ({where}); names must be unique")
        bad.extend(idx)

    involved = tuple(dict.fromkeys(names[i] for i in bad))
    return TestResult(
        name="member_integrity",
        passed=not msgs,
        messages=ctx.cap(msgs),
        members=involved,
        measured={
            "members": ctx.n,
            "invalid_geometry": int((~ctx.valid).sum()),
            "duplicate_names": len(dupes),
            "problems": len(msgs),
        },
    )


def _why_not_rigid(matrix: np.ndarray) -> str:
    """What is wrong with a transform that is no rotation plus translation. A matrix written
    column-major (its transpose) carries the translation in the last row; the released rebuild,
    Blender's ``Matrix(rows)``, reads rows, and so do we."""
    row = matrix[3, :3]
    if row.any() and not matrix[:3, 3].any() and matrix[3, 3] == 1.0:
        x, y, z = (f"{v:g}" for v in row)
        return (f"its last row holds a translation ({x}, {y}, {z}): written column-major? matrix_world "
                "lists 4 rows, the translation in the last column")
    return "shear or bad last row"


def _who(ctx: Context, i: int) -> str:
    return f"#{int(i)} ({ctx.names[int(i)]!r})"
