"""geometry=mesh in SceneReVis episodes when assets are missing: the env's physics, the optimizer,
the reward and the rule judge measure those objects on procedural stand-ins, and each says so
(step info, notes, the scored ``mesh_fallbacks`` count and the report's episode row)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from buildbench.harness import Action, Episode
from buildbench.suites.scenerevis.agents.scripted import turn_reply
from buildbench.suites.scenerevis.check.layout import parse_layout
from buildbench.suites.scenerevis.check.optimize import optimize_scene
from buildbench.suites.scenerevis.check.physics import EVALUATION, check_physics
from buildbench.suites.scenerevis.env import make_env
from buildbench.suites.scenerevis.judge.evaluation import RuleEvalJudge
from buildbench.suites.scenerevis.options import SceneReVisOptions
from buildbench.suites.scenerevis.outcome import SceneReVisOutcome
from buildbench.suites.scenerevis.report import episode_table
from buildbench.suites.scenerevis.reward.hybrid import HybridReward
from buildbench.suites.scenerevis.score import score
from buildbench.suites.scenerevis.tasks import load_tasks

FLOOR = [[-2.0, 0.0, -2.0], [2.0, 0.0, -2.0], [2.0, 0.0, 2.0], [-2.0, 0.0, 2.0]]
ROOM = {"room_type": "bedroom", "bounds_bottom": FLOOR, "bounds_top": [[x, 2.6, z] for x, _, z in FLOOR],
        "objects": [{"id": "bed_0", "desc": "double bed", "size": [1.6, 0.9, 2.1], "pos": [0.0, 0.0, 0.0],
                     "rot": [0, 0, 0, 1], "jid": "0000-not-in-the-folder"},
                    {"id": "nightstand_0", "desc": "nightstand", "size": [0.5, 0.5, 0.4], "pos": [1.3, 0.0, -0.8],
                     "rot": [0, 0, 0, 1]}]}
# three objects: the reward measures physics from three on
ROOM3 = {**ROOM, "objects": [*ROOM["objects"], {"id": "wardrobe_0", "desc": "wardrobe", "size": [1.0, 2.0, 0.6],
                                                "pos": [-1.4, 0.0, 1.6], "rot": [0, 0, 0, 1]}]}


@pytest.fixture
def empty_asset_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "3d-future"
    folder.mkdir()
    monkeypatch.setenv("BUILDBENCH_3DFUTURE_DIR", str(folder))
    monkeypatch.delenv("BUILDBENCH_OBJAVERSE_DIR", raising=False)
    return folder


def test_physics_report_lists_the_stand_ins(empty_asset_folder: Path) -> None:
    report = check_physics(parse_layout(ROOM), EVALUATION, geometry="mesh")
    assert [k for k, _ in report.mesh_fallbacks] == [0, 1]
    assert all("(fallback: " in source for _, source in report.mesh_fallbacks)
    assert check_physics(parse_layout(ROOM), EVALUATION, geometry="procedural").mesh_fallbacks == ()


def test_optimizer_lists_the_stand_ins(empty_asset_folder: Path) -> None:
    assert sorted(optimize_scene(ROOM, geometry="mesh").mesh_fallbacks) == [0, 1]
    assert optimize_scene(ROOM, geometry="procedural").mesh_fallbacks == {}


def test_rule_judge_notes_the_stand_ins(empty_asset_folder: Path) -> None:
    notes = RuleEvalJudge("mesh").judge(ROOM).notes
    assert any(n.startswith("mesh fallbacks: 2 of 2 objects judged on procedural stand-ins (object 0:")
               for n in notes), notes
    assert not any("mesh fallbacks" in n for n in RuleEvalJudge("procedural").judge(ROOM).notes)


def test_env_info_names_the_stand_ins_by_object_id(empty_asset_folder: Path) -> None:
    base = load_tasks("demo", 0)[0]
    task = dataclasses.replace(base, inputs={**base.inputs, "initial_scene": ROOM3})
    env = make_env(task, SceneReVisOptions(geometry="mesh"))
    reset = env.reset(task, seed=0)
    ids = ["bed_0", "nightstand_0", "wardrobe_0"]
    assert [f["object"] for f in reset.info["mesh_fallbacks"]] == ids
    step = env.step(Action(text=turn_reply("Done.", [{"name": "terminate", "arguments": {"reason": "done"}}])))
    assert [f["object"] for f in step.info["mesh_fallbacks"]] == ids
    plain = make_env(task, SceneReVisOptions(geometry="procedural"))
    assert "mesh_fallbacks" not in plain.reset(task, seed=0).info


def test_reward_physics_notes_the_stand_ins(empty_asset_folder: Path) -> None:
    notes: list[str] = []
    HybridReward("A bedroom", "bedroom", geometry="mesh")._physics(ROOM3, notes)
    assert any(n.startswith("physics: 3 of 3 objects on procedural stand-ins (object 0:") for n in notes), notes
    plain: list[str] = []
    HybridReward("A bedroom", "bedroom", geometry="procedural")._physics(ROOM3, plain)
    assert not any("stand-ins" in n for n in plain)


def test_score_and_report_count_the_stand_ins(empty_asset_folder: Path) -> None:
    task = load_tasks("demo", 0)[0]
    outcome = SceneReVisOutcome(scene=ROOM, geometry="mesh")
    metrics = score(task, outcome)
    assert metrics["mesh_fallbacks"] == 2.0
    assert "mesh_fallbacks" not in score(task, SceneReVisOutcome(scene=ROOM, geometry="procedural"))
    episode = Episode(task_id=task.id, sample=0, suite="scenerevis", agent="a", protocol="p", seed=0,
                      status="ok", metrics=metrics)
    assert episode_table([episode], [episode])[0]["procedural stand-ins (objects)"] == 2
