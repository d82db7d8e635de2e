"""The hybrid reward: every piecewise term at its anchors, format rules, fuse, override,
trajectory aggregation, and both judges."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scenerevis_scenes_physics as H  # registered by conftest.py

from buildbench.llm import ChatResponse, ScriptedChat
from buildbench.llm.types import ApiError
from buildbench.suites.scenerevis.judge.semantic import JudgeView, RuleJudge, VisionJudge
from buildbench.suites.scenerevis.reward import (
    FINAL_WEIGHTS,
    TURN_WEIGHTS,
    HybridReward,
    collision_rate_reward,
    format_reward,
    init_reward,
    oob_rate_reward,
    oob_volume_reward,
    penetration_reward,
    presence_score,
    relevance_score,
    size_reward,
    support_reward,
    trajectory_return,
)


@pytest.mark.parametrize(
    ("fn", "anchors"),
    [
        (collision_rate_reward, [(0, 1), (10, 0.75), (20, 0.5), (45, 0), (72.5, -0.5), (100, -1)]),
        (oob_rate_reward, [(0, 1), (10, 0.5), (20, 0.25), (30, 0), (100, -1)]),
        (
            penetration_reward,
            [
                (0, 1),
                (0.05, 0.75),
                (0.1, 0.5),
                (0.3, 0),
                (0.45, -0.25),
                (0.6, -0.5),
                (0.8, -0.75),
                (1.0, -1),
                (5.0, -1),
            ],
        ),
        (oob_volume_reward, [(0, 1), (0.2, 0.5), (0.5, 0), (0.75, -0.25), (1.0, -0.5), (2.0, -1), (9.0, -1)]),
        (support_reward, [(0, 1), (5, 0.5), (10, 0), (55, -0.5), (100, -1)]),
    ],
)
def test_piecewise_terms_at_their_anchors(fn, anchors) -> None:
    for x, y in anchors:
        assert fn(x) == pytest.approx(y), (fn.__name__, x)


def test_relevance_presence_and_size_scores() -> None:
    assert relevance_score([True, True]) == 1.0
    assert relevance_score([False, False]) == -1.0
    assert relevance_score([True, False]) == 0.5
    assert relevance_score([True, False, False]) == -0.5
    assert presence_score(3, 3, essentials_missing=True) == -1.0
    assert presence_score(99, 100, essentials_missing=False) == 1.0
    assert presence_score(6, 10, essentials_missing=False) == 0.0
    assert presence_score(5, 10, essentials_missing=False) == -1.0
    ok = {"desc": "queen bed", "size": [1.6, 0.5, 2.0]}
    minor = {"desc": "queen bed", "size": [1.6, 0.5 * 1.35 / 0.5 * 0.8, 2.0]}  # height 1.08 > 1.3 x 0.8
    critical = {"desc": "queen bed", "size": [0.5, 0.5, 2.0]}  # width < 50 % of 1.2
    assert size_reward([ok]).score == 1.0
    assert size_reward([ok, minor]).score == 0.5
    assert size_reward([minor] * 3).score == 0.0
    assert size_reward([critical]).score == 0.0
    assert size_reward([critical] * 2).score == -0.5
    assert size_reward([critical] * 3).score == -1.0
    assert size_reward([{"desc": "bedside table", "size": [0.45, 0.55, 0.4]}]).score == 1.0  # not a bed
    assert size_reward([dict(ok, retrieved_size=[0.7, 0.5, 2.0])]).critical == 1


def test_trajectory_aggregation() -> None:
    assert trajectory_return([]) == -1.0
    assert trajectory_return([1.0, 1.0]) == -1.0
    assert trajectory_return([0.5, 0.2, 1.0]) == pytest.approx(0.6 * 1.0 + 0.2 * 0.5 + 0.2 * 0.2)
    rewards = [0.1, -0.3, 0.4, 0.7, 0.9]
    assert trajectory_return(rewards) == pytest.approx(0.6 * 0.9 + 0.1 * (0.1 - 0.3 + 0.4 + 0.7))


def _create(scene: dict, *, think: bool = False) -> str:
    return (
        "<think>x</think>" if think else ""
    ) + f"<create_scene>\n```json\n{json.dumps(scene)}\n```\n</create_scene>"


def test_init_reward_rules() -> None:
    empty = H.room(H.rect(4, 4), [])
    ask = "Design a cosy bedroom for a teenager"
    assert init_reward(_create(empty), ask)[0] == 1.0
    assert init_reward(_create(H.room(H.L_ROOM, [])), ask)[0] == 0.5
    five = H.room([(0, 0), (4, 0), (4, 3), (2, 4), (0, 3)], [])
    assert init_reward(_create(five), ask)[0] == -1.0
    assert init_reward(_create(H.room(H.rect(6, 6), [])), ask)[0] == -1.0  # 36 m2 > 30
    assert init_reward(_create(H.room(H.rect(4, 4), [H.obj("bed", [1, 1, 1], [0, 0, 0])])), ask)[0] == -1.0
    assert init_reward(_create(empty, think=True), ask)[0] == -1.0
    assert init_reward("<create_scene>{}</create_scene>", ask)[0] == -1.0
    assert init_reward("<create_scene>\n```json\n{oops\n```\n</create_scene>", ask)[0] == -1.0
    ragged = dict(empty, bounds_top=empty["bounds_top"][:3])
    assert init_reward(_create(ragged), ask)[0] == -1.0
    living = dict(empty, room_type="living room", room_id="LivingRoom-3")
    assert init_reward(_create(living), ask)[0] == -1.0
    assert init_reward(_create(dict(empty, room_id="LivingRoom-3")), ask)[0] == 0.0


def _reply(calls: object, think_first: bool = True) -> str:
    think, body = "<think>plan</think>", f"<tool_calls>\n{json.dumps(calls)}\n</tool_calls>"
    return think + body if think_first else body + think


def test_format_reward_penalties() -> None:
    ids = {"bed-1"}
    add = {
        "name": "add_object",
        "arguments": {
            "object_description": "lamp",
            "position": [0, 0, 0],
            "rotation": [0, 0, 0, 1],
            "size": [0.3, 0.5, 0.3],
        },
    }
    assert format_reward(_reply([add]), ids)[0] == 1.0
    assert format_reward("<tool_calls>[]</tool_calls>", ids)[0] == -1.0
    assert format_reward(_reply([add], think_first=False), ids)[0] == -0.8
    assert format_reward("<think>a</think><tool_calls>[{oops</tool_calls>", ids)[0] == -0.9
    assert format_reward(_reply([]), ids)[0] == -1.0
    assert format_reward(_reply({"name": "terminate"}), ids)[0] == -1.0
    assert format_reward(_reply(["x"]), ids)[0] == pytest.approx(0.9)
    assert format_reward(_reply([{"arguments": {}}]), ids)[0] == pytest.approx(0.9)
    assert format_reward(_reply([{"name": "fly", "arguments": {}}]), ids)[0] == pytest.approx(0.85)
    assert format_reward(_reply([{"name": "terminate"}]), ids)[0] == pytest.approx(0.9)
    assert format_reward(_reply([{"name": "terminate", "arguments": "x"}]), ids)[0] == pytest.approx(0.9)
    assert format_reward(_reply([{"name": "terminate", "arguments": {}}]), ids)[0] == pytest.approx(0.9)
    assert format_reward(_reply([{"name": "remove_object", "arguments": {}}]), ids)[0] == pytest.approx(0.85)
    assert format_reward(_reply([{"name": "remove_object", "arguments": {"jid": "sofa-9"}}]), ids)[
        0
    ] == pytest.approx(0.8)
    move = {"name": "move_object", "arguments": {"id": "bed-1"}}
    assert format_reward(_reply([move]), ids)[0] == pytest.approx(0.9)
    assert format_reward(_reply([{"name": "fly"}] * 8), ids)[0] == 0.0


BEDROOM = [
    H.obj("king bed", [1.8, 0.5, 2.0], [0, 0, 0.9]),
    H.obj("wardrobe", [1.2, 2.0, 0.6], [-1.3, 0, -1.6]),
    H.obj("nightstand", [0.45, 0.5, 0.4], [1.2, 0, 1.7]),
    H.obj("floor lamp", [0.3, 1.5, 0.3], [1.7, 0, -1.7]),
]
TERMINATE = _reply([{"name": "terminate", "arguments": {"reason": "done"}}])


def test_final_reward_of_a_clean_bedroom_with_the_rule_judge() -> None:
    after = H.room(H.rect(4, 4.5), BEDROOM)
    reward = HybridReward("A bedroom with a king bed").final(TERMINATE, after, after)
    assert reward.phase == "final" and set(reward.terms) == set(FINAL_WEIGHTS)
    assert (
        reward.terms["format"] == 1.0 and reward.terms["key_objects"] == 1.0 and reward.terms["size"] == 1.0
    )
    assert reward.terms["collision_rate"] == 1.0 and reward.terms["support"] == 1.0
    assert reward.total == pytest.approx(sum(FINAL_WEIGHTS[k] * v for k, v in reward.terms.items()))
    assert "not comparable with the paper" in reward.judge


def test_fuse_rule_sets_every_scene_term_to_minus_one() -> None:
    no_wardrobe = [o for o in BEDROOM if o["desc"] != "wardrobe"] + [H.obj("rug", [1, 0.01, 1], [-1, 0, -1])]
    after = H.room(H.rect(4, 4.5), no_wardrobe)
    reward = HybridReward("A bedroom").final(TERMINATE, after, after)
    assert reward.terms["key_objects"] == -1.0
    assert any(n.startswith("fuse") for n in reward.notes)
    for key in (
        "collision_rate",
        "oob_rate",
        "penetration_depth",
        "oob_volume",
        "support",
        "rationality",
        "requirement_match",
        "scene_graph",
    ):
        assert reward.terms[key] == -1.0
    assert reward.total == pytest.approx(0.1 * 1.0 + 0.2 * -1 + 0.1 * 1.0 - 0.3 - 0.3)


def test_fewer_than_four_objects_override_the_final_reward() -> None:
    after = H.room(H.rect(4, 4.5), BEDROOM[:3])
    reward = HybridReward("A bedroom").final(TERMINATE, after, after)
    assert reward.total == -1.0 and reward.terms["key_objects"] == -1.0
    assert any(n.startswith("override") for n in reward.notes)


def test_intermediate_turn_terms_with_the_rule_judge() -> None:
    before = H.room(H.rect(4, 4.5), BEDROOM[:2] + [H.obj("nightstand", [0.45, 0.5, 0.4], [0.6, 0, 0.9])])
    after = H.room(H.rect(4, 4.5), BEDROOM)
    move = _reply(
        [{"name": "move_object", "arguments": {"jid": "nightstand", "new_position": [1.2, 0, 1.7]}}]
    )
    hybrid = HybridReward("A bedroom")
    reward = hybrid.turn(move, before, after)
    assert set(reward.terms) == set(TURN_WEIGHTS)
    assert reward.terms["scene_improvement"] == 1.0  # a collision was removed
    assert reward.terms["key_objects"] == 1.0  # nothing added: presence of bed/wardrobe/nightstand
    assert reward.terms["penetration_depth"] == 1.0
    assert hybrid.turn(move, after, after).terms["scene_improvement"] == -1.0  # no change
    add = _reply(
        [
            {
                "name": "add_object",
                "arguments": {
                    "object_description": "treadmill",
                    "position": [0, 0, 0],
                    "rotation": [0, 0, 0, 1],
                    "size": [0.8, 1.4, 1.8],
                },
            }
        ]
    )
    assert hybrid.turn(add, before, after).terms["key_objects"] == -1.0  # the only new object is irrelevant
    sparse = H.room(H.rect(4, 4.5), BEDROOM[:2])
    assert hybrid.turn(move, before, sparse).terms["collision_rate"] == -1.0  # < 3 objects


def test_rule_judge_scene_scores_are_levels() -> None:
    scores = RuleJudge().scene_scores(JudgeView(H.room(H.rect(4, 4.5), BEDROOM)), "A bedroom")
    assert set(scores) == {"rationality", "requirement_match", "scene_graph"}
    assert all(v in (-1, -0.5, 0, 0.5, 1) for v in scores.values())
    assert scores["requirement_match"] == 1.0


def test_vision_judge_asks_the_model_with_images_and_parses_json() -> None:
    replies = [
        'Sure: {"verdict": 1}',
        '{"objects": ["bed", "wardrobe", "nightstand"]}',
        '{"found_count": 3, "total_count": 3}',
    ]
    model = ScriptedChat(replies)
    judge = VisionJudge(model)
    image = np.zeros((8, 8, 3), dtype=np.uint8)
    before = H.room(H.rect(4, 4.5), BEDROOM[:3])
    after = H.room(H.rect(4, 4.5), BEDROOM)
    move = _reply([{"name": "move_object", "arguments": {"jid": "king bed", "new_position": [0, 0, 0.9]}}])
    reward = HybridReward("A bedroom", judge=judge).turn(
        move, before, after, before_image=image, after_image=image
    )
    assert reward.terms["scene_improvement"] == 1.0 and reward.terms["key_objects"] == 1.0
    assert len(model.requests[0].messages[-1].images) == 2
    assert reward.judge.startswith("vision:scripted")


def test_vision_judge_failures_leave_terms_at_zero_and_are_noted() -> None:
    failing = ScriptedChat([ChatResponse.failure(ApiError("api_error", "boom")), "no json here"])
    before = H.room(H.rect(4, 4.5), BEDROOM[:3])
    after = H.room(H.rect(4, 4.5), BEDROOM)
    add = _reply(
        [
            {
                "name": "add_object",
                "arguments": {
                    "object_description": "floor lamp",
                    "position": [0, 0, 0],
                    "rotation": [0, 0, 0, 1],
                    "size": [0.3, 1.5, 0.3],
                },
            }
        ]
    )
    reward = HybridReward("A bedroom", judge=VisionJudge(failing)).turn(add, before, after)
    assert reward.terms["scene_improvement"] == 0.0 and reward.terms["key_objects"] == 0.0
    assert sum("judge failed" in n for n in reward.notes) == 2


def test_init_turn_reward() -> None:
    reward = HybridReward("Design a bedroom").init_turn(_create(H.room(H.rect(4, 4), [])))
    assert reward.total == 1.0 and reward.phase == "init"
