"""The example suite's env and checks, including every kind of bad action."""

from __future__ import annotations

import math

import pytest

from buildbench.harness import Action
from buildbench.suites.example.agents import tower_design
from buildbench.suites.example.check import check_tower
from buildbench.suites.example.env import TowerEnv
from buildbench.suites.example.generate import make_task
from buildbench.suites.example.model import Blocks, parse_blocks
from buildbench.suites.example.outcome import TowerOutcome
from buildbench.suites.example.score import score


def _blocks(*boxes):
    return parse_blocks({"blocks": [{"center": c, "size": s} for c, s in boxes]}, max_blocks=100)


def test_reference_design_passes_every_test():
    task = make_task(0, 0)
    report = check_tower(_blocks(*[(b["center"], b["size"]) for b in tower_design(task)]),
                         target_height_m=task.inputs["target_height_m"],
                         footprint_half_m=task.inputs["lot_half_width_m"])
    assert report.passed, report.feedback()


@pytest.mark.parametrize("boxes,failing", [
    ([([0, 0, 0.5], [1, 1, 1]), ([0, 0, 1.56], [1, 1, 1])], "supported"),      # 6 cm gap
    ([([0, 0, 1.0], [1, 1, 2]), ([0.5, 0, 0.5], [1, 1, 1])], "no_overlap"),   # side by side, 50 cm deep
    ([([0, 0, 0.5], [1, 1, 1])], "height"),
    ([([2.8, 0, 1.0], [1, 1, 2])], "inside_lot"),
    ([([0, 0, 0.5], [1, 1, 1]), ([1.0, 0, 1.5], [1, 1, 1])], "supported"),    # edge contact only
])
def test_single_faults_fail_exactly_their_test(boxes, failing):
    report = check_tower(_blocks(*boxes), target_height_m=1.9, footprint_half_m=3.0)
    failed = [t.name for t in report.tests if not t.passed]
    assert failed == [failing], report.feedback()


def test_support_reaches_through_a_chain():
    boxes = [([0, 0, 0.5], [1, 1, 1]), ([0.3, 0, 1.5], [1, 1, 1]), ([0.6, 0, 2.5], [1, 1, 1])]
    assert check_tower(_blocks(*boxes), target_height_m=3, footprint_half_m=3).passed


@pytest.mark.parametrize("action,needle", [
    (Action(text="not json at all"), "could not parse JSON"),
    (Action(text='{"blocks": [{"center": [0, 0], "size": [1, 1, 1]}]}'), "block 0 center"),
    (Action(data={"blocks": [{"center": [0, 0, math.nan], "size": [1, 1, 1]}]}), "finite"),
    (Action(data={"blocks": [{"center": [0, 0, 1], "size": [1, -1, 1]}]}), "must be > 0"),
    (Action(data={"blocks": [{"center": [0, 0, 1], "size": [1, 1, 1e9]}]}), "limited to"),
    (Action(data={"blocks": [{"center": [0, 0, 1e12], "size": [1, 1, 1]}]}), "beyond"),
    (Action(data={"blocks": [{"center": [0, 0, 1], "size": [1, 1, 1]}] * 10_000}), "at most"),
    (Action(data={"blocks": ["brick"]}), "expected an object"),
    (Action(data=42), "expected"),
    (Action(), "empty action"),
])
def test_bad_actions_get_feedback_and_keep_the_design(action, needle):
    task = make_task(1, 0)
    env = TowerEnv(task)
    env.reset(task)
    good = env.step(Action(data={"blocks": tower_design(task)}))
    before = env.outcome().blocks
    result = env.step(action)
    assert needle in result.observation.text
    assert "unchanged" in result.observation.text
    assert env.outcome().blocks == before
    assert good.terminated and not result.terminated


def test_score_rechecks_outcome():
    task = make_task(2, 0)
    metrics = score(task, TowerOutcome(blocks=tower_design(task, fraction=0.5), attempts=1))
    assert metrics["passed"] == 0.0 and metrics["height_ratio"] == pytest.approx(0.5, abs=1e-4)


def test_empty_design_fails_cleanly():
    report = check_tower(Blocks.from_centers([[0, 0, 0]], [[1, 1, 1]]).__class__(
        mins=parse_blocks({"blocks": []}, max_blocks=1).mins, maxs=parse_blocks({"blocks": []}, max_blocks=1).maxs),
        target_height_m=1, footprint_half_m=1)
    assert not report.passed and "no blocks" in report.feedback()
