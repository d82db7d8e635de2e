"""A policy reply whose JSON json.loads could not refuse cleanly (a 10,000-digit integer: a
bare ValueError; 100,000 brackets: RecursionError out of init_reward) scores as JSON that does
not parse; NaN bounds, which json.loads read and made a 1.0 room, are refused the same way."""

from __future__ import annotations

import pytest

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
