"""An agent's hostile reply is its own invalid action, answered with feedback: never a
RecursionError or ValueError out of ``step`` (which a run stores as an unscored error)."""

from __future__ import annotations

import pytest

DEEP = "[" * 100_000 + "]" * 100_000
BIG_INT = "9" * 10_000


@pytest.mark.parametrize("action, feedback", [
    ('{"tool_calls": ' + DEEP + "}", "nested deeper than 200 levels"),
    ('{"control": "x", "args": {"a": ' + BIG_INT + "}}", "an integer of 10000 digits is over the 4300-digit limit"),
])
def test_a_hostile_tool_call_or_control_text_is_an_invalid_action(action: str, feedback: str) -> None:
    from buildbench.gym import BuildbenchEnv

    env = BuildbenchEnv("example", split="demo")
    env.reset()
    observation, reward, terminated, _, info = env.step(action)
    assert feedback in observation["text"] and info["invalid"] and not terminated


@pytest.mark.parametrize("body, message", [(DEEP, "nested deeper than 200 levels"),
                                           ('{"a": ' + BIG_INT + "}", "an integer of 10000 digits is over the 4300"),
                                           ('{"a": NaN}', "NaN is not a finite number")])
def test_a_hostile_scenerevis_reply_is_a_reply_error(body: str, message: str) -> None:
    from buildbench.suites.scenerevis.actions import ReplyError, parse_create_scene

    with pytest.raises(ReplyError, match=f"<create_scene> JSON is invalid: {message}"):
        parse_create_scene(f"<create_scene>```json\n{body}\n```</create_scene>")
