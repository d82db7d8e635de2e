"""The LEGO-Eval demo's LLM table reads each outcome as a `LegoEvalOutcome`: an episode without
one is a row that says so, not zeros."""

from __future__ import annotations

import io

from rich.console import Console

from buildbench.harness import Episode
from buildbench.suites.legoeval.demo import _llm_table


def _text(episodes: list[Episode]) -> str:
    console = Console(file=io.StringIO(), width=200)
    console.print(_llm_table(episodes))
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_an_episode_without_an_outcome_is_a_row_saying_so() -> None:
    call = {"tool": "get_top_down_view", "args": {}, "reused": True, "image_keys": ["a", "b"]}
    judged = Episode(task_id="pair-1", sample=0, suite="legoeval", agent="llm", protocol="evaluate", seed=0,
                     outcome={"verdicts": [{"id": "c1", "holds": True}, {"id": "c2", "holds": None}], "valid": True,
                              "trace": [{"calls": [call, {**call, "reused": False}]}]})
    missing = Episode(task_id="pair-2", sample=0, suite="legoeval", agent="llm", protocol="evaluate", seed=0,
                      status="error", outcome={})
    lines = {line.split("│")[1].strip(): line for line in _text([judged, missing]).splitlines() if "pair-" in line}
    cells = [c.strip() for c in lines["pair-1"].split("│")[2:-1]]
    assert cells == ["1/0/1", "True", "False", "0", "2", "1", "4"]
    cells = [c.strip() for c in lines["pair-2"].split("│")[2:-1]]
    assert cells == ["no outcome", "–", "False", "0", "–", "–", "–"]
