"""Seeded BuildArena task variants: determinism, valid specs that simulate, references and negative controls."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from buildbench.cli.main import main
from buildbench.harness import ConfigError
from buildbench.harness.store import Store
from buildbench.suites.buildarena import agents, designs, variants
from buildbench.suites.buildarena.check import judge, simulate
from buildbench.suites.buildarena.cli import cli
from buildbench.suites.buildarena.export import history_json
from buildbench.suites.buildarena.library import Workbench
from buildbench.suites.buildarena.model import Machine
from buildbench.suites.buildarena.options import BuildArenaOptions
from buildbench.suites.buildarena.physics import Trajectory
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
    drawn = variants.generate(2, 1300)
    assert len({v.id for v in drawn}) == 1300
    lift = sorted(v.id for v in drawn if v.base == "lift-2")
    assert lift == sorted(v.id for v in variants.every_variant("lift-2"))
    assert len(lift) == variants.PAYLOAD.count * variants.TARGET_HEIGHT.count
    # Transport Lv.2: every mass at every goal, less the released task (mass 50, goal 10).
    assert sum(1 for v in drawn if v.base == "transport-2") == variants.CARGO_MASS.count * variants.GOAL.count - 1
    # Transport Lv.1: flat, kerbs or terraces, at every goal, less the released flat ground at goal 10.
    grounds = 1 + variants.KERB_HEIGHT.count * variants.KERB_RINGS.count + variants.TERRACE_STEP.count
    assert sum(1 for v in drawn if v.base == "transport-1") == grounds * variants.GOAL.count - 1
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
        ("transport-1_kerb0.2", "kerb then rings, terrace alone or neither, then goal unless it is 10"),
        ("transport-1_goal14_terrace0.1", "kerb then rings, terrace alone or neither, then goal"),
        ("transport-2_mass40_goal10", "write it as 'transport-2_mass40'"),
        ("transport-2_mass40_goal7", "goal 7 is outside 6–20 in steps of 2"),
        ("transport-2_goal14", "transport-2 takes mass, then goal unless it is 10"),
        ("lift-2_payload5_height65", "height 65 is outside 20–60 in steps of 5"),
        ("lift-2_payload5_height30", "write it as 'lift-2_payload5'"),
        ("lift-3_height40", "lift-3 takes payload, then height unless it is 30"),
        ("support-1_gap4_load1500_bank30_rise0_goal12", "'goal12' is not a parameter of support-1"),
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
            if key == "height":  # the released Lift texts never state the height to beat
                assert f"{value:g}" not in text, variant.id
            elif key == "goal":
                assert f"the point (x={value:g}, y={value:g})" in text, variant.id
            elif (key, value) not in RELEASED:  # the released banks (30 wide, level) go unsaid, as in the nine
                assert f"{value:g}" in text, (variant.id, key)
        # Like the nine levels' texts: what is measured, never the bar (> 10 units, ≥ 2 s, > 30 high, TWR > 1).
        assert not re.search(r"more than|at least|threshold|>|≥", text), variant.id
        if variant.base.startswith("lift"):
            assert "30" not in text
        if variant.base.startswith("support"):
            assert "2 s" not in text and "two seconds" not in text
    assert "2 square rings of kerbs, 0.2 units high" in get_task("transport-1_kerb0.2_rings2").text
    # At the released goal and height a variant's text is its level's (plus what else it changes).
    assert get_task("transport-2_mass50_goal12").text == (
        TASKS["transport-2"].text.replace("(x=10, y=10)", "(x=12, y=12)"))
    assert get_task("lift-2_payload5_height55").text == get_task("lift-2_payload5").text
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
        "transport-1_goal20",
        "transport-1_kerb0.4_rings3_goal20",
        "transport-2_mass100_goal20",
        "transport-3_mass95",
        "transport-3_mass95_goal20",
        "support-1_gap8_load2750_bank10_rise0",
        "support-2_gap13_load3000_bank18_rise0.5",
        "support-3_gap14_load1500_bank12_rise0.25",
        "lift-2_payload15",
        "lift-3_payload13",
        "lift-2_payload15_height60",
        "lift-3_payload15_height60",
    ],
)
def test_the_reference_design_passes_known_variants(task_id: str) -> None:
    design = designs.REFERENCE[task_id]()
    result = simulate(designs.build(design), task_id)
    assert result.passed, result.reason


def test_support_references_are_lengthened_to_the_gap() -> None:
    short = designs.build(designs.REFERENCE["support-1_gap3_load1500_bank30_rise0"]())
    long = designs.build(designs.REFERENCE["support-1_gap8_load1500_bank30_rise0"]())
    assert designs.support_span(5.0) == 5 and designs.support_span(10.0) == 8 and designs.support_span(20.0) == 13
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


def test_cli_lists_and_runs_variants(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The listing goes through ``python -m buildbench``; the rest through the same CLI in this
    # process (each subprocess paid an interpreter, the suite's import and a forkserver of its own).
    bb = [sys.executable, "-m", "buildbench"]
    listed = subprocess.run([*bb, "tasks", "buildarena", "--split", "variants:2:3", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert [json.loads(line)["id"] for line in listed.stdout.splitlines()] == [v.id for v in variants.generate(2, 3)]
    assert main(["tasks", "buildarena", "--split", "lift-2_payload99"]) == 2
    assert "payload 99 is outside 5–15" in capsys.readouterr().err
    rc = main(["run", "buildarena", "--split", "variants:0:8", "--limit", "2", "--run-dir", str(tmp_path / "run"),
               "-o", "sim_duration_s=1", "-q"])
    assert rc in (0, 1), capsys.readouterr().err
    with Store(tmp_path / "run", create=False) as store:
        episodes = list(store.episodes())
    assert sorted(e.task_id for e in episodes) == sorted(v.id for v in variants.generate(0, 2))
    assert all(e.status == "ok" for e in episodes)
    rc = main(["run", "buildarena", "--split", "support-1_gap6.5_load2000_bank18_rise0", "-a", "negative",
               "--run-dir", str(tmp_path / "control"), "-q"])
    assert rc == 0, capsys.readouterr().err
    with Store(tmp_path / "control", create=False) as store:
        (episode,) = store.episodes()
    assert episode.status == "ok" and episode.metrics["passed"] == 0.0 and episode.agent == "negative"


def _drive(end_xy: tuple[float, float], seconds: float = 10.0) -> Trajectory:
    """A starting block and the cargo going straight from the start to ``end_xy`` (25 Hz)."""
    t = np.arange(0.0, seconds + 1e-9, 0.04)
    frac = t / seconds
    path = np.column_stack([frac * end_xy[0], frac * end_xy[1], np.full_like(t, 0.5)])
    return Trajectory(t, ["1", "Ballast"], ["Starting Block", "Ballast"], np.stack([path, path], axis=1),
                      [], np.zeros((t.size, 0), bool), np.full(t.size, 40.0))


def _climb(top: float) -> Trajectory:
    """A starting block rising as (t − 2)² after 2 s, levelling off at ``top`` (25 Hz, 30 s)."""
    t = np.arange(0.0, 30.0 + 1e-9, 0.04)
    z = np.minimum(np.where(t > 2.0, (t - 2.0) ** 2, 0.0), top)
    path = np.column_stack([np.zeros_like(t), np.zeros_like(t), z])
    return Trajectory(t, ["1"], ["Starting Block"], path[:, None, :], [], np.zeros((t.size, 0), bool), np.zeros(0))


def test_pass_rules_and_metrics_read_the_variants_goal_and_height() -> None:
    machine = _trivial_machine()
    near = _drive((9.0, 9.0))  # 12.7 units out
    assert judge(get_task("transport-2"), machine, near).passed
    assert judge(get_task("transport-2_mass40_goal12"), machine, near).passed
    far_goal = judge(get_task("transport-2_mass40_goal14"), machine, near)
    assert not far_goal.passed and "(needs > 14)" in far_goal.reason
    # The line-following metrics run to the variant's goal point: (6, 6) is all of the way to goal 6
    # and half of the way to goal 12.
    short = _drive((6.0, 6.0))
    assert judge(get_task("transport-2_mass40_goal6"), machine, short).metrics["max_progress_ratio"] == (
        pytest.approx(1.0, abs=1e-6))
    assert judge(get_task("transport-2_mass40_goal12"), machine, short).metrics["max_progress_ratio"] == (
        pytest.approx(0.5, abs=1e-6))
    assert judge(get_task("transport-2"), machine, short).metrics["max_progress_ratio"] == pytest.approx(0.6, abs=1e-6)
    flight = _climb(50.0)  # 50 high and still climbing between the 2–7 s and 7–12 s windows
    for task_id, passes in (("lift-2", True), ("lift-2_payload5_height45", True), ("lift-2_payload5_height55", False),
                            ("lift-3_payload9_height20", True), ("lift-3_payload9_height60", False)):
        verdict = judge(get_task(task_id), machine, flight)
        assert verdict.passed is passes, (task_id, verdict.reason)
    assert "(needs > 55)" in judge(get_task("lift-2_payload5_height55"), machine, flight).reason


def test_the_short_deck_is_the_longest_no_longer_than_the_gap() -> None:
    assert designs.short_deck_span(5.0) == 2  # the released control at the released gap
    for gap in (variants.GAP[1].value(i) for i in range(variants.GAP[1].count)):
        span = designs.short_deck_span(gap)
        assert 2 * span + 1 <= gap < 2 * span + 3, gap


@pytest.mark.parametrize(("gap", "load"), [(3.0, 750), (4.5, 2250), (6.5, 2000), (8.0, 3000)])
def test_the_short_deck_control_fails_the_variants(gap: float, load: int) -> None:
    (task,) = load_tasks(f"support-1_gap{gap:g}_load{load}_bank18_rise0", 0)
    agent = agents.negative(task, None, BuildArenaOptions())
    assert isinstance(agent, agents.DesignAgent)
    design = designs.control_design(task.id, "bridge shorter than the gap")
    assert design.name == f"short deck, gap {gap:g}"
    assert not simulate(designs.build(design), task.id).passed


def test_negative_agent_maps_a_variant_to_its_levels_control() -> None:
    (terrain,) = load_tasks("transport-1_kerb0.2_rings2_goal14", 0)
    agent = agents.negative(terrain, None, BuildArenaOptions())
    assert isinstance(agent, agents.DesignAgent)
    assert agent.actions == agents.script_actions(designs.NEGATIVE["wheels on bottom faces"][1]())
    # Every level has a control now; a variant of a level gets its level's (fitted to its gap).
    (lift,) = load_tasks("lift-2_payload5", 0)
    cold = agents.negative(lift, None, BuildArenaOptions())
    assert isinstance(cold, agents.DesignAgent)
    assert cold.actions == agents.script_actions(designs.NEGATIVE["rocket with cold cannons"][1]())
    (bridge,) = load_tasks("support-2_gap12_load1500_bank30_rise0", 0)
    assert isinstance(agents.negative(bridge, None, BuildArenaOptions()), agents.DesignAgent)
    assert designs.control_design(bridge.id, "three beams shorter than the gap").name == "three short beams, gap 12"
    with pytest.raises(ValueError, match="targets task 'lift-1', not 'transport-1_goal8'"):
        agents.negative(load_tasks("transport-1_goal8", 0)[0], None, BuildArenaOptions(control="unheated cannon"))
    with pytest.raises(ValueError, match="targets task 'lift-1' and its variants, not 'transport-1_goal8'"):
        designs.control_design("transport-1_goal8", "unheated cannon")


def test_simulate_and_analyze_commands_take_variant_ids(tmp_path: Path) -> None:
    machine = designs.build(designs.REFERENCE["transport-2"]())
    (tmp_path / "carrier.json").write_text(history_json(machine), encoding="utf-8")
    out = CliRunner().invoke(cli, ["simulate", str(tmp_path / "carrier.json"), "--task", "transport-2_mass40_goal20",
                                   "--duration", "0.2", "--json"])
    assert out.exit_code == 1, out.output  # 0.2 s does not get it anywhere: a failing verdict
    report = json.loads(out.output)
    assert report["task"] == "transport-2_mass40_goal20" and "(needs > 20)" in report["reason"]
    (tmp_path / "log.csv").write_text(_drive((9.0, 9.0)).to_csv(), encoding="utf-8")
    analyze = ["analyze", str(tmp_path / "log.csv"), "--machine", str(tmp_path / "carrier.json"), "--task"]
    passed = CliRunner().invoke(cli, [*analyze, "transport-2_mass40_goal12"])
    assert passed.exit_code == 0 and json.loads(passed.output)["passed"] is True, passed.output
    failed = CliRunner().invoke(cli, [*analyze, "transport-2_mass40_goal14"])
    assert failed.exit_code == 1 and "needs > 14" in json.loads(failed.output)["reason"]
    for command in (["simulate", str(tmp_path / "carrier.json")], analyze[:4]):
        bad = CliRunner().invoke(cli, [*command, "--task", "transport-2_mass40_goal7"])
        assert bad.exit_code == 2 and "goal 7 is outside 6–20" in bad.output, bad.output
