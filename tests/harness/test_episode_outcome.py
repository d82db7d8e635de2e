"""`episode_outcome`: a stored outcome read back as its suite's record for the readers of a run;
None for an episode that stored none, one `OutcomeReadError` line for one that does not read."""

from __future__ import annotations

import math
from typing import Any

import pytest

from buildbench.harness import Episode
from buildbench.harness.episode_outcome import OutcomeReadError, episode_outcome
from buildbench.suites.buildarena.outcome import OUTCOME_FORMAT, BuildArenaOutcome
from buildbench.suites.example.outcome import TowerOutcome
from buildbench.suites.scenerevis.outcome import SceneReVisOutcome


def _ep(outcome: Any) -> Episode:
    return Episode(task_id="t-9", sample=1, suite="x", agent="a", protocol="p", seed=0, outcome=outcome)


def test_an_episode_that_stored_nothing_has_no_outcome() -> None:
    assert episode_outcome(_ep({}), SceneReVisOutcome) is None


def test_a_stored_outcome_reads_as_the_record() -> None:
    stored = {"scene": {"objects": []}, "turns": 3, "turn_rewards": [1, 0.5, math.nan], "future_key": [1]}
    read = episode_outcome(_ep(stored), SceneReVisOutcome)
    assert read is not None and read.turns == 3 and read.scene == {"objects": []}
    assert read.extra == {"future_key": [1]}  # a newer run's key is kept, not refused
    assert math.isnan(read.turn_rewards[2])  # what the store wrote, NaN included


@pytest.mark.parametrize(("record", "stored", "says"), [
    (SceneReVisOutcome, ["scene"], "scenerevis outcome: expected a JSON object, got list"),
    (SceneReVisOutcome, {"turns": True}, "scenerevis outcome: turns: expected an integer or null, got bool"),
    (SceneReVisOutcome, {"turn_rewards": [1.0, "x"]}, "turn_rewards[1]: expected a number, got str"),
    (SceneReVisOutcome, {"eval_judge": []}, "eval_judge: expected an object or null, got list"),
    (TowerOutcome, {"blocks": [{"center": [0, 0, "1"]}]}, "blocks[0].center[2]: expected a number, got str"),
    (BuildArenaOutcome, {"task_id": "lift-1"}, "buildarena outcome: format None, expected"),
    (BuildArenaOutcome, {"format": OUTCOME_FORMAT}, "buildarena outcome: missing key 'task_id'"),
])
def test_a_malformed_outcome_is_one_line_naming_the_episode_and_field(record: Any, stored: Any, says: str) -> None:
    with pytest.raises(OutcomeReadError) as caught:
        episode_outcome(_ep(stored), record)
    message = str(caught.value)
    assert message.startswith("episode 't-9' sample 1: stored outcome unreadable: ") and "\n" not in message
    assert says in message, message


def test_the_run_folder_is_named_first_where_it_is_known() -> None:
    with pytest.raises(OutcomeReadError) as caught:
        episode_outcome(_ep({"turns": "3"}), SceneReVisOutcome)
    assert str(caught.value.in_run("/runs/r1")).startswith("/runs/r1: episode 't-9' sample 1: ")
