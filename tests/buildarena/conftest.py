"""The original's recorded answers per CPU class, and the released profile's agreement with them.

The committed recordings (``data/differential-<set>.jsonl.gz``) were made by the original code on
one CPU class (AVX-512). Where an answer prints a number on a rounding edge (0.295 shown as 0.29
or 0.3, a pitch of -0.0 or 0.0) or decides an overlap of blocks that just touch, its last bits
decide the text, and those bits depend on the CPU class (``buildbench.numeric_platform``:
numpy's kernels). The original run again on another class answers those calls differently, the
way our library does there. So a class the original was recorded on has an overlay
(``data/differential-<set>.<class slug>.overlay.jsonl.gz``, written by
``tools/buildarena_oracle/overlay.py``: that class's own answers to the calls that differ, or
whole sequences where the calls part) and there the tests require the recording class's bounds
against that class's original answers. A set without an overlay for this class falls back
to the agreement table recorded for the class (``data/agreement-by-cpu.json``, the weaker check
of session 14: the counts per operation must match exactly, so a change of code still shows),
and on a class with neither, the recording class's bounds are tried and, when they fail, a
floor holds with a warning. How to record a class: ``tools/buildarena_oracle/README.md``,
"Recording another CPU class"; an agreement table: ``BUILDBENCH_RECORD_AGREEMENT=1 pytest -p
no:xdist <tests>`` (only where the original cannot be run).
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buildbench.numeric_platform import numeric_platform

DATA = Path(__file__).parent / "data"
AGREEMENT_BY_CPU = DATA / "agreement-by-cpu.json"
#: Least share of calls agreeing (normalised text and state) on a CPU class never recorded.
CROSS_CLASS_FLOOR = 0.97


def class_slug(cpu_class: str) -> str:
    """``"x86_64 AuthenticAMD X86_V3"`` -> ``"x86_64-authenticamd-x86_v3"`` (a file name part)."""
    return re.sub(r"[^a-z0-9_]+", "-", cpu_class.lower()).strip("-")


def overlay_path(name: str, cpu_class: str | None = None) -> Path:
    """The overlay of set ``name`` (``dev``, ``assembly-dev``, ...) for a CPU class (this one by default)."""
    return DATA / f"differential-{name}.{class_slug(cpu_class or numeric_platform())}.overlay.jsonl.gz"


def _read(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _call_slots(sequence: dict[str, Any]) -> dict[str, tuple[list[dict[str, Any]], int]]:
    # where a call sits, named as overlay.py names it: "12", or "1/12" (session 1) in an assembly
    if "sessions" in sequence:
        return {f"{number}/{index}": (session["calls"], index)
                for number, session in enumerate(sequence["sessions"]) for index in range(len(session["calls"]))}
    return {str(index): (sequence["calls"], index) for index in range(len(sequence["calls"]))}


def apply_overlay(sequences: list[dict[str, Any]], overlay: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The committed sequences with a class's own answers in place (by seed; the committed order kept).

    A patched call must be the committed call (same operation and arguments): an overlay made from
    another set or generator version is refused, not applied where it does not belong.
    """
    by_seed = {entry["seed"]: entry for entry in overlay}
    unknown = set(by_seed) - {seq["seed"] for seq in sequences}
    if unknown:
        raise ValueError(f"overlay names seeds the recording lacks: {sorted(unknown)[:5]}")
    result = []
    for seq in sequences:
        entry = by_seed.get(seq["seed"])
        if entry is None:
            result.append(seq)
        elif entry.get("left_out"):
            continue
        elif "sequence" in entry:
            result.append(entry["sequence"])
        else:
            patched = json.loads(json.dumps(seq))  # the cached committed set stays as recorded
            slots = _call_slots(patched)
            for where, call in entry["calls"].items():
                calls, index = slots[where]
                if (calls[index]["op"], calls[index]["params"]) != (call["op"], call["params"]):
                    raise ValueError(f"overlay seed {seq['seed']} call {where}: not the recorded call")
                if calls[index] == call:  # an overlay holds only what this class answers differently
                    raise ValueError(f"overlay seed {seq['seed']} call {where}: the recorded answer again")
                calls[index] = call
            result.append(patched)
    return result


@functools.cache
def _recording(name: str, cpu_class: str) -> list[dict[str, Any]]:
    sequences = _read(DATA / f"differential-{name}.jsonl.gz")
    path = overlay_path(name, cpu_class)
    return apply_overlay(sequences, _read(path)) if path.is_file() else sequences


@pytest.fixture(scope="session")
def differential_recording() -> Callable[[str], list[dict[str, Any]]]:
    """``load(name)``: recording ``name`` as the original answered on this CPU class where it was
    recorded here (its overlay applied), else as the recording class answered. Do not mutate."""
    return lambda name: _recording(name, numeric_platform())


@pytest.fixture()
def released_agreement(platform_bits: Callable[..., bool]) -> Callable[..., None]:
    """``check(name, agreement, bounds)``: ``bounds(agreement)`` asserts the recording class's bounds.
    On a class with an overlay for ``name`` (the agreement measured on ``differential_recording``)
    they must hold; else a failure is judged by this class's agreement table, or, on a class with
    none, by the floor with a warning."""

    def check(name: str, agreement: Any, bounds: Callable[[Any], None]) -> None:
        if overlay_path(name).is_file():
            bounds(agreement)
            return
        try:
            bounds(agreement)
            return
        except AssertionError as exc:
            failure = str(exc).splitlines()[0][:300]
        recorded: dict[str, Any] = json.loads(AGREEMENT_BY_CPU.read_text()) if AGREEMENT_BY_CPU.is_file() else {}
        table = agreement.table()
        if os.environ.get("BUILDBENCH_RECORD_AGREEMENT") == "1":
            recorded.setdefault(name, {})[numeric_platform()] = table
            AGREEMENT_BY_CPU.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
            return
        if platform_bits(recorded.get(name, {}), table, f"{name}: agreement per operation on this CPU class"):
            return
        warnings.warn(f"{name}: the original was never recorded on this CPU class ({numeric_platform()}), and "
                      f"the recording class's bounds fail here ({failure}); only the floor "
                      f"{CROSS_CLASS_FLOOR:.0%} is checked", stacklevel=2)
        for kind in ("normalized", "state"):
            assert agreement.rate(kind) >= CROSS_CLASS_FLOOR, f"{name}: {kind} below the cross-class floor"

    return check
