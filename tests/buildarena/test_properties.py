"""Property tests of the construction library on random call sequences (bounded, derandomised)."""

from __future__ import annotations

import itertools
import json

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buildbench.suites.buildarena.library import Workbench
from buildbench.suites.buildarena.library.collision import shapes_overlap
from buildbench.suites.buildarena.library.geometry import collider_shape

KINDS = ["Small Wooden Block", "Small Wooden Block", "Powered Wheel", "Water Cannon", "Torch"]
FACES = list("ABCDEF")
SETTINGS = settings(
    max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def _state(bench: Workbench) -> dict:
    """Machine state without history, id counter or listing order."""
    raw = bench.machine.to_json()
    raw.pop("history")
    raw.pop("next_id")
    raw["blocks"] = sorted(raw["blocks"], key=lambda b: b["id"])
    return raw


def _brute_force_pairs(bench: Workbench) -> list[tuple[str, str]]:
    shapes = {i: collider_shape(b) for i, b in bench.machine.blocks.items()}
    live = {i: s for i, s in shapes.items() if s is not None}
    return [(a, b) for a, b in itertools.combinations(sorted(live), 2) if shapes_overlap(live[a], live[b])]


@st.composite
def call(draw: st.DrawFn, ids: list[str]) -> tuple[str, dict]:
    op = draw(st.sampled_from(["attach", "attach", "attach", "twist", "shift", "flip", "remove", "connect"]))
    block = draw(st.sampled_from(ids))
    if op == "attach":
        return "attach_block_to", {
            "base_block": block,
            "face": draw(st.sampled_from(FACES)),
            "new_block": draw(st.sampled_from(KINDS)),
        }
    if op == "twist":
        return "twist_block", {"block_id": block, "angle": draw(st.sampled_from([45, 90, 180, -90, 30]))}
    if op == "shift":
        step = st.sampled_from([-0.5, -0.25, 0.0, 0.1, 0.25, 0.5])
        return "shift_block", {"block_id": block, "shift_real": [draw(step), draw(step), draw(step)]}
    if op == "flip":
        return "flip_spin", {"block_id": block}
    if op == "remove":
        return "remove_block", {"block_id": block}
    other = draw(st.sampled_from(ids))
    return "connect_blocks", {
        "block_a": block,
        "face_a": draw(st.sampled_from(FACES)),
        "block_b": other,
        "face_b": draw(st.sampled_from(FACES)),
        "connector": "Brace",
    }


@SETTINGS
@given(st.data())
def test_no_overlap_after_success_and_failures_change_nothing(data: st.DataObject) -> None:
    bench = Workbench()
    bench.call("start")
    for _ in range(25):
        op, params = data.draw(call(list(bench.machine.blocks)))
        before = json.dumps(bench.machine.to_json())
        out = bench.call(op, params)
        if out.ok:
            assert bench.index.all_pairs() == []
        else:
            assert json.dumps(bench.machine.to_json()) == before, (op, params, out.text)
    assert _brute_force_pairs(bench) == []


@SETTINGS
@given(st.data())
def test_attach_then_remove_restores_state(data: st.DataObject) -> None:
    bench = Workbench()
    bench.call("start")
    for _ in range(10):
        op, params = data.draw(call(list(bench.machine.blocks)))
        bench.call(op, params)
    before = _state(bench)
    base = data.draw(st.sampled_from(list(bench.machine.blocks)))
    out = bench.call(
        "attach_block_to",
        {
            "base_block": base,
            "face": data.draw(st.sampled_from(FACES)),
            "new_block": data.draw(st.sampled_from(KINDS)),
        },
    )
    if out.ok:
        assert bench.call("remove_block", {"block_id": bench.machine.next_id - 1}).ok
    assert _state(bench) == before


@SETTINGS
@given(st.data(), st.sampled_from([360, -360, 720]))
def test_full_turn_twist_is_identity(data: st.DataObject, angle: int) -> None:
    bench = Workbench()
    bench.call("start")
    for _ in range(8):
        op, params = data.draw(call(list(bench.machine.blocks)))
        bench.call(op, params)
    movable = [i for i, b in bench.machine.blocks.items() if b.type != "Starting Block"]
    if not movable:
        return
    target = data.draw(st.sampled_from(movable))
    rotation = bench.machine.blocks[target].rotation.copy()
    out = bench.call("twist_block", {"block_id": target, "angle": angle})
    assert out.ok, out.text
    assert np.allclose(bench.machine.blocks[target].rotation, rotation, atol=1e-12)
    turns = [bench.call("twist_block", {"block_id": target, "angle": 120}).ok for _ in range(3)]
    if all(turns):
        assert np.allclose(bench.machine.blocks[target].rotation, rotation, atol=1e-9)
