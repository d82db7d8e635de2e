"""Differential test: the ``released`` profile against answers recorded from the original library.

``data/differential-*.jsonl.gz`` were written by ``tools/buildarena_oracle``
(the unmodified released library at commit fc64b2b3, Python 3.12, numpy
2.5.5, numpy-quaternion 2024.0.13, trimesh 5.2.0, python-fcl 0.7.0.11,
``PYTHONHASHSEED=0``) on seeded random call sequences:

* ``differential-dev`` (seeds 0-299) is the development set: every call
  must agree after normalization, with the same block ids after it.
* ``differential-heldout`` (seeds 100000-100249) was generated once and
  never used to tune the library; it is the measurement of the >= 99 %
  target (and the default profile's agreement is reported beside it).
* ``differential-odd-heldout`` (seeds 200000-200239 of
  ``odd_calls.OddCallGenerator``, seed 200004 left out: it killed the
  original's process) holds longer builds and odder arguments: padded,
  full-width and boolean ids, lower-case and multi-letter faces, ``None``
  and strings in vectors, boundary, huge and overflowing shifts, tiny and
  wrapped angles, same-face connections, shifts followed by overlap
  questions, Powered Wheels everywhere, many keys per action. The released
  profile must agree on >= 99.5 % of its calls.
* ``differential-edge`` (seeds 300000-300149 of ``edge_calls.EdgeCallGenerator``)
  holds call shapes and edges the odd set lacks: missing and extra arguments,
  names that are not tools, calls repeated after they failed, queries before
  ``start`` and after ``reset``, quarter turns run four times, init rotations of
  90/180/270/360 on up to three axes, notes and names in other scripts or not
  text at all, NaN/infinite/text/None control times and indices. The released
  profile must agree on every call before a block of the sequence reaches a
  non-finite position; after that FCL holds a NaN or infinite collider and
  answers erratically (README of ``tools/buildarena_oracle``, "The odd held-out
  set"), and those calls must still agree on >= 99.5 % overall.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buildbench.suites.buildarena.library import Workbench
from buildbench.suites.buildarena.library.released import ReleasedWorkbench
from buildbench.suites.buildarena.library.released.agreement import Agreement, measure, normalize

DATA = Path(__file__).resolve().parent / "data"


def _load(name: str) -> list[dict[str, Any]]:
    with gzip.open(DATA / f"differential-{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _released() -> Any:
    bench = ReleasedWorkbench()

    def call(op: str, params: dict[str, Any]) -> tuple[str, list[str]]:
        return bench.call(op, params).text, list(bench.machine.blocks)

    return call


def _default() -> Any:
    bench = Workbench()

    def call(op: str, params: dict[str, Any]) -> tuple[str, list[str]]:
        return bench.call(op, params).text, list(bench.machine.blocks)

    return call


def _describe(agreement: Agreement) -> str:
    miss = agreement.misses[0] if agreement.misses else {}
    return f"{agreement.table()} first miss: {json.dumps(miss)[:1500]}"


def test_corpus_covers_every_operation_block_and_face() -> None:
    seqs = _load("dev")
    ops = {c["op"] for s in seqs for c in s["calls"]}
    assert {"start", "attach_block_to", "connect_blocks", "remove_block", "reset", "twist_block", "shift_block",
            "flip_spin", "get_machine_summary", "get_block_details", "change_control_key", "add_control_sequence",
            "remove_control_sequence", "reset_control_sequence", "review_powered_blocks",
            "review_control_config", "review_control_sequence"} <= ops
    blocks = {c["params"].get("new_block") for s in seqs for c in s["calls"]}
    assert {"Small Wooden Block", "Powered Wheel", "Water Cannon", "Torch", "Ballast", "Brace", "Winch"} <= blocks
    faces = {c["params"].get("face") for s in seqs for c in s["calls"]}
    assert set("ABCDEF") <= faces
    ids = [c["params"].get("block_id") for s in seqs for c in s["calls"] if "block_id" in c["params"]]
    assert any(isinstance(i, int) for i in ids) and any(isinstance(i, str) for i in ids)
    assert sum(c.get("exception") is not None for s in seqs for c in s["calls"]) > 50
    assert sum(len(s["calls"]) >= 50 for s in seqs) > 100
    assert sum(len(s["calls"]) for s in seqs) > 10_000


def test_released_profile_matches_every_dev_answer(
    released_agreement: Callable[..., None], differential_recording: Callable[[str], list[dict[str, Any]]]
) -> None:
    def bounds(agreement: Agreement) -> None:
        assert agreement.rate("normalized") == 1.0, _describe(agreement)
        assert agreement.rate("state") == 1.0, _describe(agreement)
        assert agreement.rate("exact") > 0.99, _describe(agreement)

    released_agreement("dev", measure(differential_recording("dev"), _released), bounds)


def test_released_profile_reaches_target_on_heldout_set() -> None:
    agreement = measure(_load("heldout"), _released)
    assert agreement.rate("normalized") >= 0.99, _describe(agreement)
    for row in agreement.table():
        assert row["normalized"] >= 0.97 * row["calls"], row


def test_odd_corpus_covers_what_it_claims() -> None:
    calls = [c for s in _load("odd-heldout") for c in s["calls"]]
    assert len(calls) > 25_000 and sum(len(s["calls"]) >= 150 for s in _load("odd-heldout")) > 40
    ids = [c["params"].get("block_id", c["params"].get("base_block")) for c in calls]
    assert {" 1", "01", "１", True, False} <= {i for i in ids if isinstance(i, str | bool)}
    faces = {c["params"].get("face") for c in calls if isinstance(c["params"].get("face"), str)}
    assert {"a", "AB", "Face A"} <= faces
    vectors = [c["params"]["shift_real"] for c in calls if c["op"] == "shift_block"]
    assert any(isinstance(v, list) and None in v for v in vectors)
    assert any(isinstance(v, list) and any(isinstance(x, str) for x in v) for v in vectors)
    assert any(isinstance(v, list) and 0.5000001 in v for v in vectors)
    angles = {c["params"]["angle"] for c in calls if c["op"] == "twist_block" and isinstance(c["params"]["angle"], float)}
    assert {1e-12, 359.9999999, 1e20} <= angles
    answers = {str(c.get("exception")) for c in calls}
    assert "RuntimeError: Failed to align vectors: SVD did not converge" in answers
    assert any(a.startswith("TypeError: unsupported operand type(s) for *: 'NoneType'") for a in answers)


def test_released_profile_reaches_target_on_odd_heldout_set(
    released_agreement: Callable[..., None], differential_recording: Callable[[str], list[dict[str, Any]]]
) -> None:
    def bounds(agreement: Agreement) -> None:
        assert agreement.rate("normalized") >= 0.995, _describe(agreement)
        assert agreement.rate("state") >= 0.995, _describe(agreement)
        assert agreement.rate("exact") >= 0.99, _describe(agreement)
        for row in agreement.table():
            assert row["normalized"] >= 0.99 * row["calls"], row

    released_agreement("odd-heldout", measure(differential_recording("odd-heldout"), _released), bounds)


def test_default_profile_answers_every_odd_call() -> None:
    # The default profile refuses odd arguments in its own words; it must answer them all (a raise
    # would end the measure) and still differ from the original where documented.
    agreement = measure(_load("odd-heldout")[:60], _default)
    assert sum(agreement.total.values()) > 5_000 and agreement.rate("normalized") < 0.9


def test_default_profile_differs_where_documented() -> None:
    # The default profile keeps our fixes, so it must disagree on a good share of the corpus;
    # if it agreed, either the fixes were lost or the corpus stopped exercising them.
    agreement = measure(_load("heldout")[:40], _default)
    assert agreement.rate("normalized") < 0.9


@pytest.mark.parametrize(("a", "b"), [
    ("Position: [ 1.,-0., 1.]", "Position: [1.,0.,1.]"),
    ("at [0.  0.5 0. ]", "at [0.00000000e+00 5.00000000e-01 2.22044605e-16]"),
    ("Overlapping detected between <ID 3: X> and <ID 2: Y>\nOverlapping detected between <ID 4: X> and <ID 2: Y>",
     "Overlapping detected between <ID 4: X> and <ID 2: Y>\nOverlapping detected between <ID 3: X> and <ID 2: Y>"),
])
def test_normalization_ignores_printing_noise(a: str, b: str) -> None:
    assert normalize(a) == normalize(b)


@pytest.mark.parametrize(("a", "b"), [
    ("Position: [0.25,2.,1.5]", "Position: [0.5,2.,2.]"),
    ("Base block 0 not found", "Base block 1 not found"),
    ("Facing towards <North with 0.0° pitch>", "Facing towards <South with 0.0° pitch>"),
])
def test_normalization_keeps_real_differences(a: str, b: str) -> None:
    assert normalize(a) != normalize(b)


_NON_FINITE = re.compile(r"Position: \[[^\]]*\b(?:nan|inf)\b")


def test_edge_corpus_covers_what_it_claims() -> None:
    calls = [c for s in _load("edge") for c in s["calls"]]
    assert len(calls) > 15_000
    answers = [str(c.get("exception")) for c in calls]
    assert any(a.startswith("TypeError: missing a required argument") for a in answers)
    assert any(a.startswith("TypeError: got an unexpected keyword argument") for a in answers)
    assert "AttributeError: 'Machine' object has no attribute 'Start'" in answers
    notes = {c["params"].get("note") for c in calls if isinstance(c["params"].get("note"), str)}
    assert {"左轮", "line1\nline2", "{placeholder}"} <= notes
    rotations = [c["params"].get("init_rotation") for c in calls if c["op"] == "start"]
    assert [0, 90, 0] in rotations and [360, 360, 360] in rotations
    times = [c["params"].get("time") for c in calls if c["op"] == "add_control_sequence"]
    assert any(isinstance(t, float) and t != t for t in times) and None in times
    repeats = sum(a == b for s in _load("edge") for a, b in zip(s["calls"], s["calls"][1:], strict=False))
    assert repeats > 500


def test_released_profile_agrees_on_edge_calls_until_a_block_is_not_finite(
    released_agreement: Callable[..., None], differential_recording: Callable[[str], list[dict[str, Any]]]
) -> None:
    sequences = differential_recording("edge")
    first_non_finite = {}
    for seq in sequences:
        answers = [str(c.get("result", "")) for c in seq["calls"]]
        first_non_finite[seq["seed"]] = next((i for i, a in enumerate(answers) if _NON_FINITE.search(a)), None)

    def bounds(agreement: Agreement) -> None:
        for miss in agreement.misses:
            start = first_non_finite[miss["seed"]]
            assert start is not None and miss["index"] > start, json.dumps(miss)[:1500]
        assert agreement.rate("normalized") >= 0.995 and agreement.rate("state") >= 0.995, _describe(agreement)

    released_agreement("edge", measure(sequences, _released), bounds)
    assert sum(v is not None for v in first_non_finite.values()) >= 10  # the edge is exercised
