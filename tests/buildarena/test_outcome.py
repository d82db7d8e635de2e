"""The typed outcome: one demo episode's stored outcome reads as a BuildArenaOutcome and writes back the same JSON."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from buildbench.harness import RunConfig, execute_episode, get_suite
from buildbench.suites.buildarena.outcome import BuildArenaOutcome


def test_a_demo_outcome_round_trips_through_its_type(tmp_path: Path) -> None:
    suite = get_suite("buildarena")
    config = RunConfig(suite="buildarena", agent=suite.default_agent,
                       protocol=suite.default_protocol or next(iter(suite.protocols)), split="demo", limit=1,
                       workers=0)
    task = suite.load_tasks("demo", 0)[0]
    episode = asyncio.run(execute_episode(config, task, 0, tmp_path))
    assert episode.status == "ok", episode.error
    stored = json.loads(json.dumps(episode.outcome))
    typed = BuildArenaOutcome.from_dict(stored)
    assert typed.to_dict() == stored
    assert list(typed.to_dict()) == list(stored)
    assert BuildArenaOutcome.from_dict(typed.to_dict()) == typed
    assert typed.extra == {}
    assert suite.score(task, typed.to_dict()) == pytest.approx(episode.metrics, nan_ok=True)
