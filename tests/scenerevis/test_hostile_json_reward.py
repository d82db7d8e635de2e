"""A policy reply whose JSON json.loads could not refuse cleanly (a 10,000-digit integer: a
bare ValueError; 100,000 brackets: RecursionError out of init_reward) scores as JSON that does
not parse; NaN bounds, which json.loads read and made a 1.0 room, are refused the same way. A
judge model's answer of that kind is a judge failure (it raised out of the judge)."""

from __future__ import annotations

import re

import pytest
import scenerevis_scenes_physics as H  # registered by conftest.py

from buildbench.llm import ScriptedChat
from buildbench.suites.scenerevis.judge.semantic import JudgeError, VisionJudge, first_json_object
from buildbench.suites.scenerevis.reward import HybridReward, format_reward, init_reward
from buildbench.suites.scenerevis.reward.format import parse_tool_calls

BIG_INT = '{"a": ' + "9" * 10_000 + "}"
DEEP = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
NAN_ROOM = ('{"room_type": "bedroom", "bounds_bottom": [[0, 0, 0], [NaN, 0, 0], [NaN, 0, NaN], [0, 0, NaN]], '
            '"bounds_top": [[0, 3, 0], [NaN, 3, 0], [NaN, 3, NaN], [0, 3, NaN]], "objects": []}')
HOSTILE = [(BIG_INT, "an integer of 10000 digits is over the 4300-digit limit"),
           (DEEP, "nested deeper than 200 levels (BUILDBENCH_LIMIT_JSON_DEPTH)"),
           (NAN_ROOM, "NaN is not a finite number")]


@pytest.mark.parametrize("body, message", HOSTILE)
def test_a_hostile_turn_0_scene_does_not_parse(body: str, message: str) -> None:
    reply = "<create_scene>\n```json\n" + body + "\n```\n</create_scene>"
    assert init_reward(reply, "A bedroom") == (-1.0, f"scene JSON does not parse: {message}")
    score = HybridReward("A bedroom").init_turn(reply)
    assert score.total == -1.0 and score.notes == [f"scene JSON does not parse: {message}"]


@pytest.mark.parametrize("body, message", HOSTILE)
def test_hostile_tool_calls_do_not_parse(body: str, message: str) -> None:
    reply = "<think>move it</think><tool_calls>[" + body + "]</tool_calls>"
    assert format_reward(reply, {"bed-0"}) == (-0.9, f"tool_calls JSON does not parse: {message}")
    assert parse_tool_calls(reply) is None


@pytest.mark.parametrize("answer, what", [
    ('Verdict: {"verdict": ' + "9" * 10_000 + "}", "Exceeds the limit (4300 digits) for integer string conversion"),
    ('Verdict: {"verdict": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
])
def test_a_hostile_judge_answer_is_a_judge_error(answer: str, what: str) -> None:
    with pytest.raises(JudgeError, match=re.escape(f"judge: the JSON in the answer is refused ({what})")):
        first_json_object(answer, "judge")
    before = H.room(H.rect(4, 4.5), [])
    reward = HybridReward("A bedroom", judge=VisionJudge(ScriptedChat([answer, answer]))).turn(
        '<think>add</think><tool_calls>[{"name": "add_object", "arguments": {"object_description": "lamp", '
        '"position": [0, 0, 0], "rotation": [0, 0, 0, 1], "size": [0.3, 1.5, 0.3]}}]</tool_calls>', before, before)
    assert sum("judge failed" in n and what in n for n in reward.notes) == 2
