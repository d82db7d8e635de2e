"""Conformance: every corpus script gives the same members in the fast and the blender executor."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from buildbench.suites.dreamhouse.executors import BlenderUnavailable, ExecResult, Executor, make_executor

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.py"))
TOLERANCE = 1e-6 + 1e-9  # exported values are rounded to 6 decimals; allow one last-digit step


def _differences(a: Any, b: Any, path: str = "members") -> list[str]:
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} vs {len(b)} entries"]
        return [
            d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, f"{path}[{i}]")
        ]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a)} vs {sorted(b)}"]
        return [d for k in a for d in _differences(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, str) or isinstance(b, str):
        return [] if a == b else [f"{path}: {a!r} vs {b!r}"]
    return [] if math.isclose(a, b, rel_tol=0.0, abs_tol=TOLERANCE) else [f"{path}: {a} vs {b}"]


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 30


@pytest.fixture(scope="session")
def executors() -> Iterator[tuple[Executor, Executor]]:
    """One fast and one blender executor per test process, reset before each script."""
    try:
        blender = make_executor("blender")
    except BlenderUnavailable as exc:
        pytest.skip(f"real Blender not installed ({exc}); create it with tools/setup_blender.sh")
    with blender, make_executor("fast") as fast:
        yield fast, blender


def _run(ex: Executor, code: str) -> ExecResult:
    ex.reset()
    return ex.run(code)


@pytest.mark.parametrize("script", [p.name for p in CORPUS])
def test_same_members_in_both_executors(executors: tuple[Executor, Executor], script: str) -> None:
    code = (Path(__file__).parent / "corpus" / script).read_text()
    fast, blender = (_run(ex, code) for ex in executors)
    assert blender.status == "ok", blender.error
    assert fast.status == "ok", fast.error
    assert blender.members, "the corpus script should leave members in the scene"
    diffs = _differences(fast.members, blender.members)
    assert not diffs, "\n".join(diffs[:10])
