"""The evaluation judge (spec §5.2): the rule judge at its anchors, the vision judge's answer
parsing, and how the scorer fills (or leaves out) Ra/Spa/Ac/Avg."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
import scenerevis_scenes_physics as H  # registered by conftest.py

from buildbench.harness import Task
from buildbench.llm import ChatResponse, ScriptedChat
from buildbench.llm.types import ApiError
from buildbench.suites.scenerevis.judge.evaluation import (
    RULE_LABEL,
    RuleEvalJudge,
    VisionEvalJudge,
    eval_prompt,
    parse_scores,
)
from buildbench.suites.scenerevis.judge.semantic import JudgeError
from buildbench.suites.scenerevis.outcome import SceneReVisOutcome
from buildbench.suites.scenerevis.score import score

ROOM = H.rect(4.0, 4.5)  # 18 m2, inside the bedroom range (10-25 m2)
EMPTY = H.room(ROOM, [])
FURNISHED = H.room(ROOM, [
    H.obj("Queen bed with a grey headboard", [1.6, 0.5, 2.0], [0.0, 0.0, -1.2]),
    H.obj("Walnut nightstand", [0.5, 0.55, 0.42], [-1.15, 0.0, -2.0]),
    H.obj("Walnut nightstand", [0.5, 0.55, 0.42], [1.15, 0.0, -2.0]),
    H.obj("White wardrobe", [1.2, 2.1, 0.6], [-1.3, 0.0, 1.95], 180),
    H.obj("Oak desk", [1.2, 0.75, 0.6], [1.65, 0.0, 1.2], -90),
    H.obj("Office chair", [0.5, 0.9, 0.5], [1.1, 0.0, 1.2], 90),
])
MESS = H.room(ROOM, [
    H.obj("Queen bed", [1.6, 0.5, 2.0], [0.0, 0.0, 0.0]),
    H.obj("Wardrobe", [1.2, 2.1, 0.6], [0.3, 0.0, 0.2], 30),
    H.obj("Desk", [1.2, 0.75, 0.6], [-0.2, 0.0, -0.3]),
    H.obj("Nightstand", [0.5, 0.55, 0.42], [0.1, 0.0, 0.1]),
    H.obj("Sofa", [2.0, 0.8, 0.9], [1.8, 0.0, 0.5], 90),
])
TASK = Task("bedroom_1", "scenerevis", inputs={"instruction": "A quiet bedroom with a desk."})
GOOD_REPLY = json.dumps({"rationality": 8, "spatial_layout": 7, "accessibility": 9, "comment": "Tidy."})


def rule(scene: dict) -> tuple[int, int, int]:
    out = RuleEvalJudge().judge(scene, "A quiet bedroom with a desk.")
    return out.Ra, out.Spa, out.Ac


# --- the rule judge ---------------------------------------------------------------------------------
def test_an_empty_room_scores_one_everywhere():
    out = RuleEvalJudge().judge(EMPTY, "a bedroom")
    assert (out.Ra, out.Spa, out.Ac, out.avg) == (1, 1, 1, 1.0) and not out.comparable_with_paper


def test_a_well_furnished_valid_room_scores_high():
    ra, spa, ac = rule(FURNISHED)
    assert ra == 10 and spa >= 9 and ac == 10


def test_a_colliding_mess_scores_low():
    ra, spa, ac = rule(MESS)
    assert ra <= 3 and spa <= 3 and ac < 10
    assert sum(rule(MESS)) < sum(rule(FURNISHED)) - 10


def test_rationality_is_capped_for_a_wrong_size_or_too_few_objects():
    huge = H.room(H.rect(8.0, 8.0), FURNISHED["objects"])  # 64 m2: outside 10-25
    assert rule(huge)[0] == 6
    sparse = H.room(ROOM, FURNISHED["objects"][:3])
    assert rule(sparse)[0] == 6


def test_out_of_bounds_costs_spatial_points():
    pushed = json.loads(json.dumps(FURNISHED))
    pushed["objects"][3]["pos"] = [-1.3, 0.0, 2.6]  # the wardrobe half through the north wall
    assert rule(FURNISHED)[1] - rule(pushed)[1] >= 3


def test_furniture_behind_a_narrow_gap_costs_accessibility():
    walled = H.room(ROOM, [
        *FURNISHED["objects"][:3],
        # Two wardrobes across the room leave a 0.4 m slot: the bed half is cut off.
        H.obj("Wardrobe", [1.8, 2.1, 0.6], [-1.1, 0.0, 0.3]),
        H.obj("Wardrobe", [1.8, 2.1, 0.6], [1.1, 0.0, 0.3]),
    ])
    assert rule(walled)[2] <= 5


def test_the_rule_judge_is_deterministic():
    assert RuleEvalJudge().judge(MESS, "x") == RuleEvalJudge().judge(json.loads(json.dumps(MESS)), "x")


# --- the vision judge -------------------------------------------------------------------------------
@pytest.mark.parametrize("reply, problem", [
    ("The room looks fine, 8/10.", "no JSON object"),
    ('{"rationality": 8, "spatial_layout": 7}', "accessibility"),
    ('{"rationality": 11, "spatial_layout": 7, "accessibility": 9}', "rationality"),
    ('{"rationality": 7.5, "spatial_layout": 7, "accessibility": 9}', "rationality"),
    ('{"rationality": true, "spatial_layout": 7, "accessibility": 9}', "rationality"),
])
def test_a_malformed_judge_answer_is_an_error(reply, problem):
    with pytest.raises(JudgeError, match=problem):
        parse_scores(reply, "vision:test")


def test_a_good_answer_gives_the_three_scores_and_their_mean():
    out = parse_scores(f"Here you go: {GOOD_REPLY}", "vision:test")
    assert (out.Ra, out.Spa, out.Ac) == (8, 7, 9) and out.avg == 8.0 and out.notes == ("Tidy.",)


def test_the_vision_judge_sends_the_rubric_metadata_and_the_resized_render():
    model = ScriptedChat(replies=[GOOD_REPLY])
    judge = VisionEvalJudge(model)
    image = np.zeros((570, 1070, 3), dtype=np.uint8)
    out = asyncio.run(judge.evaluate(FURNISHED, "A quiet bedroom with a desk.", image))
    assert out.scores() == {"Ra": 8.0, "Spa": 7.0, "Ac": 9.0, "Avg": 8.0} and out.comparable_with_paper
    request = judge.request(FURNISHED, "A quiet bedroom with a desk.", image)
    assert request.temperature == 0.1
    prompt = eval_prompt(FURNISHED, "A quiet bedroom with a desk.")
    assert "18.0 m2" in prompt and "10-25 m2" in prompt and "6 objects" in prompt and "at most 6" in prompt


def test_an_api_error_raises_judge_error():
    class Failing(ScriptedChat):
        async def generate(self, request):  # type: ignore[no-untyped-def]
            return ChatResponse.failure(ApiError("api_error", "HTTP 500"), "judge")

    with pytest.raises(JudgeError, match="HTTP 500"):
        asyncio.run(VisionEvalJudge(Failing()).evaluate(FURNISHED, "a bedroom"))


# --- the scorer ---------------------------------------------------------------------------------------
def test_without_a_record_the_scorer_applies_the_rule_judge_labelled_not_comparable():
    metrics = score(TASK, SceneReVisOutcome.from_dict({"scene": FURNISHED}))
    assert metrics["Ra"] == 10.0 and metrics["judge_comparable"] == 0.0
    assert metrics["Avg"] == pytest.approx((metrics["Ra"] + metrics["Spa"] + metrics["Ac"]) / 3)
    assert "rule" in RULE_LABEL and "not comparable" in RULE_LABEL


def test_eval_judge_none_leaves_the_judge_fields_out():
    metrics = score(TASK, SceneReVisOutcome.from_dict({"scene": FURNISHED, "eval_judge": {"judge": "none", "status": "off"}}))
    assert not {"Ra", "Spa", "Ac", "Avg", "judge_comparable"} & set(metrics) and "oob_rate" in metrics


def test_model_scores_are_copied_and_a_failure_is_never_a_score():
    ok = {"judge": "vision:vllm:j", "status": "ok", "Ra": 8, "Spa": 7, "Ac": 9, "latency_s": 1.5}
    metrics = score(TASK, SceneReVisOutcome.from_dict({"scene": MESS, "eval_judge": ok}))
    assert (metrics["Ra"], metrics["Avg"], metrics["judge_comparable"], metrics["judge_failed"]) == (8.0, 8.0, 1.0, 0.0)
    assert metrics["judge_latency_s"] == 1.5
    failed = {"judge": "vision:vllm:j", "status": "error", "error": "HTTP 500"}
    metrics = score(TASK, SceneReVisOutcome.from_dict({"scene": MESS, "eval_judge": failed}))
    assert metrics["judge_failed"] == 1.0 and not {"Ra", "Spa", "Ac", "Avg"} & set(metrics)
    assert metrics["collision_rate"] > 0  # physics still scored


@pytest.mark.parametrize("record", [{"judge": "vision:x", "status": "ok", "Ra": 12, "Spa": 7, "Ac": 9},
                                    {"judge": "vision:x", "status": "ok", "Ra": 8, "Spa": "7", "Ac": 9},
                                    "eight"])
def test_a_corrupt_judge_record_is_an_input_error(record):
    with pytest.raises(ValueError, match="task bedroom_1: .*eval_judge"):
        score(TASK, SceneReVisOutcome.from_dict({"scene": FURNISHED, "eval_judge": record}))


# --- the rule judge at the episode's geometry level (issue 20) ----------------------------------------
TUCKED = H.room(ROOM, [*FURNISHED["objects"][:5],
                       H.obj("Office chair", [0.5, 0.9, 0.5], [1.3, 0.0, 1.2], 90)])  # 20 cm under the desk


def test_the_rule_judge_follows_the_geometry_level():
    boxes = RuleEvalJudge().judge(TUCKED, "a bedroom")
    shaped = RuleEvalJudge("procedural").judge(TUCKED, "a bedroom")
    assert boxes.Ra < 9 and any("collide" in n for n in boxes.notes)  # the boxes of chair and desk overlap
    assert shaped.Ra >= 9 and not any("collide" in n for n in shaped.notes)  # the seat fits under the desk top
    with pytest.raises(ValueError, match="geometry"):
        RuleEvalJudge("voxels")


def test_the_scorer_judges_at_the_outcome_geometry():
    outcome = {"scene": TUCKED, "instruction": "a bedroom"}
    assert score(TASK, SceneReVisOutcome.from_dict(outcome))["Ra"] == RuleEvalJudge().judge(TUCKED, "a bedroom").Ra
    shaped = score(TASK, SceneReVisOutcome.from_dict({**outcome, "geometry": "procedural"}))
    assert shaped["Ra"] == RuleEvalJudge("procedural").judge(TUCKED, "a bedroom").Ra >= 9
