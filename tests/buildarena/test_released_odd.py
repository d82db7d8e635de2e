"""The ``released`` profile on odd arguments: non-finite geometry, tiny twists, hash-ordered listings.

The expected answers were checked against the original library (commit
fc64b2b3, ``tools/buildarena_oracle``); the NaN-collider sequence killed the
original's process and ours before the collider check (``released.colliders``).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np

from buildbench.suites.buildarena.library.released import ReleasedWorkbench
from buildbench.suites.buildarena.library.released.colliders import Colliders, regular
from buildbench.suites.buildarena.library.released.hashorder import set_order, string_hash

DATA = Path(__file__).resolve().parent / "data"


def test_connector_with_an_end_at_infinity_is_refused_as_the_original_refused_it() -> None:
    bench = ReleasedWorkbench()
    bench.call("start", {"init_shift": [1e308, 0, 0]})
    out = bench.call("shift_block", {"block_id": 1, "shift_real": [1e308, 0, 0]})
    assert "Position: [inf, 0., 0.]" in out.text
    for face_b in ("A", "C"):  # the same face (inf - inf is NaN, not "too close") and another one
        out = bench.call("connect_blocks", {"block_a": 1, "face_a": "A", "block_b": 1, "face_b": face_b,
                                             "connector": "Brace"})
        assert out.crashed and out.text == "RuntimeError: Failed to align vectors: SVD did not converge"
    assert list(bench.machine.blocks) == ["1"] and bench.machine.uid == 2


def test_none_in_a_shift_reads_as_nan_and_a_nan_block_overlaps_nothing() -> None:
    bench = ReleasedWorkbench()
    bench.call("start", {})
    bench.call("attach_block_to", {"base_block": 1, "face": "C", "new_block": "Powered Wheel"})
    out = bench.call("shift_block", {"block_id": 2, "shift_real": [None, 0, 0]})
    assert out.text.startswith("The block 2 <Powered Wheel> is shifted by [None, 0, 0].")
    out = bench.call("attach_block_to", {"base_block": 2, "face": "E", "new_block": "Torch"})
    assert out.text.startswith("You have successfully added <ID 3: Torch>.") and "Position: [nan," in out.text
    out = bench.call("attach_block_to", {"base_block": 1, "face": "E", "new_block": "Small Wooden Block"})
    assert out.text.startswith("You have successfully added <ID 4: Small Wooden Block>.")


def test_bounds_decide_for_colliders_fcl_must_not_see() -> None:
    import trimesh

    colliders = Colliders()
    colliders.add("1", trimesh.creation.box(extents=[0.8, 0.8, 0.8]))
    lost = trimesh.creation.box(extents=[0.8, 0.8, 0.8])
    lost.vertices[:, 0] = np.nan
    colliders.add("2", lost)
    assert colliders.overlapping() == [] and "2" in colliders
    far = trimesh.creation.box(extents=[0.8, 0.8, 0.8])
    far.vertices[:, 1] = np.inf
    colliders.add("3", far)
    colliders.add("10", far.copy())
    assert colliders.overlapping() == [("10", "3")]  # named as trimesh names pairs: sorted as strings
    colliders.remove("3")
    assert colliders.names() == ["1", "2", "10"] and colliders.overlapping() == []


def test_far_colliders_stay_out_of_fcl_and_overlap_as_fcl_answered() -> None:
    import trimesh

    def box_at(*at: float) -> trimesh.Trimesh:
        return trimesh.creation.box(extents=[0.8, 0.8, 0.8]).apply_translation(at)

    colliders = Colliders()
    colliders.add("1", box_at(1e308, 1e308, 0))  # collapsed to a segment: meets its like
    colliders.add("2", box_at(1e308, 1e308, 0.5))
    colliders.add("3", box_at(1e308, 0, 0))  # collapsed flat: FCL found no overlap for those
    colliders.add("4", box_at(1e308, 0, 0.3))
    colliders.add("5", box_at(1e15, 0, 0))  # far but still resolved: FCL decides
    colliders.add("6", box_at(1e15, 0, 0.5))
    assert not regular(box_at(1e308, 0, 0)) and regular(box_at(1e15, 0, 0))
    assert sorted(colliders.overlapping()) == [("1", "2"), ("5", "6")]


def test_the_sequence_that_killed_fcl_now_answers_every_call() -> None:
    # A NaN collider in FCL's broad phase ended this sequence with a segmentation fault (the
    # original's process too), so it runs in a child process.
    script = (
        "import json, sys, faulthandler\n"
        "faulthandler.enable()\n"
        "from buildbench.suites.buildarena.library.released import ReleasedWorkbench\n"
        "bench = ReleasedWorkbench()\n"
        "for op, params in json.load(open(sys.argv[1])):\n"
        "    out = bench.call(op, params)\n"
        "print(out.text.splitlines()[0])\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(DATA / "released-nan-collider.json")],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "You have successfully added <ID 23: Water Cannon>."


def test_twists_below_numpy_quaternion_eps_do_not_turn() -> None:
    bench = ReleasedWorkbench()
    bench.call("start", {})
    bench.call("attach_block_to", {"base_block": 1, "face": "E", "new_block": "Torch"})
    before = bench.machine.blocks["2"].orientation.matrix.copy()
    bench.call("twist_block", {"block_id": 2, "angle": 1e-12})
    assert np.array_equal(bench.machine.blocks["2"].orientation.matrix, before)
    bench.call("twist_block", {"block_id": 2, "angle": 1e-9})
    assert not np.array_equal(bench.machine.blocks["2"].orientation.matrix, before)


def test_set_order_is_cpython_set_order_without_hash_randomisation() -> None:
    rng = random.Random(5)
    pool = ["UpArrow", "DownArrow", "LeftArrow", "RightArrow", "", "é", "Ａlpha1", "a much longer key than eight"]
    pool += [f"Alpha{d}" for d in range(10)] + [f"Keypad{d}" for d in range(10)]
    cases: list[list[object]] = [[rng.choice(pool) for _ in range(rng.randint(0, 30))] for _ in range(40)]
    cases += [[(str(rng.randint(1, 30)), str(rng.randint(1, 30))) for _ in range(rng.randint(0, 20))]
              for _ in range(20)]
    script = "import json, sys\nfor items in json.load(sys.stdin):\n" \
             "    items = [tuple(i) if isinstance(i, list) else i for i in items]\n" \
             "    print(json.dumps([list(set(items)), {str(k): hash(k) for k in items if isinstance(k, str)}]))\n"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    result = subprocess.run([sys.executable, "-c", script], input=json.dumps(cases), capture_output=True, text=True,
                            env=env, timeout=60, check=True)
    for items, line in zip(cases, result.stdout.splitlines(), strict=True):
        order, hashes = json.loads(line)
        assert set_order(items) == [tuple(i) if isinstance(i, list) else i for i in order]  # type: ignore[type-var]
        assert all(string_hash(k) == h % 2**64 for k, h in hashes.items())


def test_control_keys_are_listed_in_the_recorded_set_order() -> None:
    bench = ReleasedWorkbench()
    bench.call("start", {})
    bench.call("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Powered Wheel"})
    for key in ("Alpha3", "Keypad7", "DownArrow", "Alpha0"):
        bench.call("change_control_key", {"block_id": 2, "action": "spinning_forward", "new_key": key})
    listed = [line.split(",")[0].removeprefix("Key: ") for line in bench.call("review_control_config", {}).text
              .splitlines()]
    bound = bench.machine.blocks["2"].locomotion
    assert isinstance(bound, dict)
    assert listed == set_order([k for keys in bound.values() for k in keys]) and sorted(listed) != listed
