"""The houses the recording covers (no buildbench import: the runner shares this list)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Every house the recording covers, relative to the repository root.
HOUSE_GLOBS = ("tests/scenes/fixtures/*.json", "tests/scenes/fixtures/real/*.json",
               "tests/legoeval/fixtures/legobench_tiny/data_*/data_*.json",
               "tests/legoeval/fixtures/generator_scenes/*.json", "tests/legoeval/data/oracle_houses/*.json")


def house_paths() -> list[Path]:
    return sorted(p for g in HOUSE_GLOBS for p in ROOT.glob(g))
