"""Typed outcomes: a demo episode's stored outcome of every suite reads as the suite's outcome
type (``Suite.outcome_type``) and writes back the same JSON, key order included, and scores the same."""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path

import pytest

from buildbench.harness import RunConfig, execute_episode, get_suite

OUTCOME_TYPES = {
    "bimedit": "BimEditOutcome",
    "buildarena": "BuildArenaOutcome",
    "dreamhouse": "DreamHouseOutcome",
    "example": "TowerOutcome",
    "legoeval": "LegoEvalOutcome",
    "scenerevis": "SceneReVisOutcome",
}


@pytest.mark.parametrize("name", sorted(OUTCOME_TYPES))
def test_a_demo_outcome_round_trips_through_its_type(name: str, tmp_path: Path) -> None:
    outcome_type = getattr(importlib.import_module(f"buildbench.suites.{name}.outcome"), OUTCOME_TYPES[name])
    suite = get_suite(name)
    config = RunConfig(suite=name, agent=suite.default_agent,
                       protocol=suite.default_protocol or next(iter(suite.protocols)), split="demo", limit=1,
                       workers=0)
    task = suite.load_tasks("demo", 0)[0]
    episode = asyncio.run(execute_episode(config, task, 0, tmp_path))
    assert episode.status == "ok", episode.error
    stored = json.loads(json.dumps(episode.outcome))
    typed = outcome_type.from_dict(stored)
    assert typed.to_dict() == stored
    assert list(typed.to_dict()) == list(stored)
    assert outcome_type.from_dict(typed.to_dict()) == typed
    assert typed.extra == {}
    assert suite.outcome_type is outcome_type  # the store's JSON is read back as the suite's type
    assert suite.score(task, suite.read_outcome(stored)) == pytest.approx(episode.metrics, nan_ok=True)
