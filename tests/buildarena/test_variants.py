"""Seeded BuildArena task variants: determinism, valid specs that simulate, references and negative controls."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from buildbench.harness import ConfigError
from buildbench.harness.store import Store
from buildbench.suites.buildarena import designs, variants
from buildbench.suites.buildarena.check import simulate
from buildbench.suites.buildarena.library import Workbench
from buildbench.suites.buildarena.model import Machine
from buildbench.suites.buildarena.suite import VARIANTS_COUNT, load_tasks, suite
from buildbench.suites.buildarena.tasks import TASKS, TERRAIN_HEIGHT, get_task, scene_for

RELEASED = {("bank", 30.0), ("rise", 0.0)}


def _trivial_machine() -> Machine:  # a starting block and one wooden block on its top
    bench = Workbench()
    bench.call("start")
    bench.call("attach_block_to", {"base_block": 1, "face": "C", "new_block": "Small Wooden Block"})
    return bench.machine


def test_generation_is_deterministic_prefix_stable_and_distinct() -> None:
    first = variants.generate(11, 40)
    assert first == variants.generate(11, 40)
    assert variants.generate(11, 16) == first[:16]
    assert [v.id for v in variants.generate(12, 40)] != [v.id for v in first]
    ids = [v.id for v in first]
    assert len(set(ids)) == len(ids)
    assert [v.base for v in first[:8]] == list(variants.VARIED_LEVELS)
    assert not any(variants.same_as_level(v) for v in first)
    assert [t.id for t in load_tasks("variants:11:40", 0)] == ids
    assert [t.id for t in load_tasks("variants", 11)] == ids[:VARIANTS_COUNT]


def test_small_grids_drop_out_of_the_cycle_once_used_up() -> None:
    drawn = variants.generate(2, 150)
    assert len({v.id for v in drawn}) == 150
    lift = sorted(v.id for v in drawn if v.base == "lift-2")
    assert lift == sorted(v.id for v in variants.every_variant("lift-2")) and len(lift) == variants.PAYLOAD.count
    assert sum(1 for v in drawn if v.base == "transport-2") == variants.CARGO_MASS.count - 1  # less the released 50
    total = sum(sum(1 for _ in variants.every_variant(base)) for base in variants.VARIED_LEVELS)
    with pytest.raises(ValueError, match=f"only {total} distinct ones exist"):
        variants.generate(0, total + 1)


def test_ids_round_trip_and_every_value_is_on_its_grid() -> None:
    for variant in variants.generate(3, 64):
        assert variants.parse(variant.id) == variant
        ranges = variants.ranges_of(variant.base)
        for key, value in variant.params:
            assert ranges[key].holds(value), (variant.id, key)
        spec = get_task(variant.id)
        assert spec.id == variant.id and spec.category == TASKS[variant.base].category
        assert spec.level == TASKS[variant.base].level and spec.duration_s == TASKS[variant.base].duration_s


@pytest.mark.parametrize(
    ("task_id", "message"),
    [
        ("support-2_gap99_load1500_bank30_rise0", "gap 99 is outside 8–14 in steps of 0.5"),
        ("support-2_gap12.25_load1500_bank30_rise0", "gap 12.25 is outside"),
        ("support-2_gap12.0_load1500_bank30_rise0", "write it as 'support-2_gap12_load1500_bank30_rise0'"),
        ("support-2_load1500_gap12_bank30_rise0", "takes gap, load, bank, rise in that order"),
        ("support-2_gap12", "takes gap, load, bank, rise in that order"),
        ("transport-1_kerb0.2", "kerb then rings, or terrace alone"),
        ("transport-2_mass50_kerb0.2_rings1", "'kerb0.2' is not a parameter of transport-2"),
        ("lift-1_payload5", "unknown task 'lift-1_payload5'"),
        ("lift-2_payloadNaN", "'payloadNaN' is not a parameter"),
    ],
)
def test_malformed_variant_ids_fail_with_one_line(task_id: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        get_task(task_id)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_texts_state_the_parameters_and_no_pass_thresholds() -> None:
    for variant in variants.generate(5, 48):
        text = get_task(variant.id).text
        for key, value in variant.params:
            if (key, value) not in RELEASED:  # the released banks (30 wide, level) go unsaid, as in the nine
                assert f"{value:g}" in text, (variant.id, key)
        # Like the nine levels' texts: what is measured, never the bar (> 10 units, ≥ 2 s, > 30 high, TWR > 1).
        assert not re.search(r"more than|at least|threshold|>|≥", text), variant.id
        if variant.base.startswith("lift"):
            assert "30" not in text
        if variant.base.startswith("support"):
            assert "2 s" not in text and "two seconds" not in text
    assert "2 square rings of kerbs, 0.2 units high" in get_task("transport-1_kerb0.2_rings2").text
    assert "reaching 2000 mass units after 15 seconds" in get_task("support-3_gap16_load2000_bank12_rise0.5").text


def test_scenes_carry_the_parameters() -> None:
    machine = _trivial_machine()
    kerbs = scene_for(get_task("transport-1_kerb0.3_rings2"), machine)
    assert len(kerbs.terrain) == 8 and {b.size[2] for b in kerbs.terrain} == {0.3}
    steps = scene_for(get_task("transport-1_terrace0.1"), machine)
    assert max(b.size[2] for b in steps.terrain) == pytest.approx(0.6)
    # The start stays clear: no box reaches within 4 units of the origin along x or y.
    for box in (*kerbs.terrain, *steps.terrain):
        assert max(abs(box.center[0]) - box.size[0] / 2, abs(box.center[1]) - box.size[1] / 2) >= 4.0 - 1e-9
    support = get_task("support-2_gap12_load2500_bank10_rise0.5")
    scene = scene_for(support, machine)
    north, south = scene.terrain
    assert north.size == (10.0, 20.0, TERRAIN_HEIGHT + 0.5) and south.size == (10.0, 20.0, TERRAIN_HEIGHT)
    assert north.center[1] - north.size[1] / 2 == pytest.approx(6.0)
    assert scene.cargo is not None and scene.cargo.mass_max == 2500.0
    flat = scene_for(get_task("support-2_gap12_load2500_bank10_rise0"), machine)
    assert scene.placement_offset[2] - flat.placement_offset[2] == pytest.approx(0.5)
    lift = scene_for(get_task("lift-3_payload12"), machine)
    assert lift.cargo is not None and lift.cargo.mass_max == 12.0 and lift.cargo.size == variants.PAYLOAD_SIZE
    assert scene_for(get_task("transport-3_mass85"), machine).cargo.mass_max == 85.0  # type: ignore[union-attr]


def test_every_varied_level_simulates_a_trivial_machine() -> None:
    machine = _trivial_machine()
    for variant in variants.generate(8, 16):
        result = simulate(machine, variant.id, duration_s=0.5)
        assert result.metrics["simulated_s"] > 0.3 and result.metrics["diverged_at_s"] is None, variant.id
        assert not result.passed, variant.id


@pytest.mark.parametrize(
    "task_id",
    [
        "transport-1_kerb0.4_rings3",
        "transport-1_terrace0.15",
        "transport-3_mass95",
        "support-1_gap8_load2750_bank10_rise0",
        "support-2_gap13_load3000_bank18_rise0.5",
        "support-3_gap14_load1500_bank12_rise0.25",
        "lift-2_payload15",
        "lift-3_payload13",
    ],
)
def test_the_reference_design_passes_known_variants(task_id: str) -> None:
    design = designs.REFERENCE[task_id]()
    result = simulate(designs.build(design), task_id)
    assert result.passed, result.reason


def test_support_references_are_lengthened_to_the_gap() -> None:
    short = designs.build(designs.REFERENCE["support-1_gap3_load1500_bank30_rise0"]())
    long = designs.build(designs.REFERENCE["support-1_gap8_load1500_bank30_rise0"]())
    assert variants.support_span(5.0) == 5 and variants.support_span(10.0) == 8 and variants.support_span(20.0) == 13
    assert long.num_blocks > short.num_blocks
    assert designs.REFERENCE.get("support-2_gap99") is None and designs.REFERENCE.get("nope") is None
    assert list(designs.REFERENCE) == list(TASKS)


@pytest.mark.parametrize(
    ("task_id", "control"),
    [
        ("transport-1_terrace0.05", designs.bottom_wheel_vehicle),
        ("support-1_gap8_load750_bank30_rise0", lambda: designs.beam_bridge(2)),
        ("lift-2_payload5", designs.unheated_engine),
    ],
)
def test_negative_controls_still_fail(task_id: str, control: Callable[[], list[designs.Call]]) -> None:
    result = simulate(designs.build(designs.Design("control", control())), task_id)
    assert not result.passed, result.reason


def test_suite_admits_variant_splits_and_ids() -> None:
    splits = suite.splits
    assert "variants" in list(splits) and "variants:4:7" in splits
    assert "support-2_gap12_load1500_bank30_rise0" in splits and "nope" not in splits
    (task,) = load_tasks("support-2_gap12_load1500_bank30_rise0", 0)
    assert task.metadata["variant"] == {"of": "support-2", "params": {"gap": 12.0, "load": 1500.0, "bank": 30.0,
                                                                     "rise": 0.0}}
    assert "variant" not in load_tasks("support-2", 0)[0].metadata
    for bad, message in (("variants:x", "variants:SEED:COUNT"), ("variants:1:0", "count 0 is outside"),
                         ("variants:1:99999", "outside 1–10000")):
        with pytest.raises(ConfigError, match=message):
            load_tasks(bad, 0)


def test_cli_lists_and_runs_variants(tmp_path: Path) -> None:
    bb = [sys.executable, "-m", "buildbench"]
    listed = subprocess.run([*bb, "tasks", "buildarena", "--split", "variants:2:3", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert [json.loads(line)["id"] for line in listed.stdout.splitlines()] == [v.id for v in variants.generate(2, 3)]
    bad = subprocess.run([*bb, "tasks", "buildarena", "--split", "lift-2_payload99"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "payload 99 is outside 5–15" in bad.stderr
    run = subprocess.run([*bb, "run", "buildarena", "--split", "variants:0:8", "--limit", "2", "--run-dir",
                          str(tmp_path / "run"), "-o", "sim_duration_s=1", "-q"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode in (0, 1), run.stderr
    with Store(tmp_path / "run", create=False) as store:
        episodes = list(store.episodes())
    assert sorted(e.task_id for e in episodes) == sorted(v.id for v in variants.generate(0, 2))
    assert all(e.status == "ok" for e in episodes)
