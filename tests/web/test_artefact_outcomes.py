"""The viewer's artefacts read each stored outcome as its suite's record: an episode that stored
none says so (and how it ended) instead of drawing an empty product, and a malformed outcome is
one note naming the run folder and the episode, never an exception."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from buildbench.harness import Episode
from buildbench.web.artefacts import ArtefactContext, build_artefact

SUITES = ("dreamhouse", "buildarena", "scenerevis", "legoeval", "example")
MALFORMED: dict[str, dict[str, Any]] = {
    "dreamhouse": {"structure": ["Sill"]},
    "buildarena": {"format": "buildbench.buildarena.outcome/1", "task_id": "support-1", "seed": "one"},
    "scenerevis": {"scene": "a room"},
    "legoeval": {"verdicts": {"c1": True}},
    "example": {"blocks": "tower"},
    "bimedit": {"model_path": 7},
}


def _episode(suite: str, outcome: dict[str, Any]) -> Episode:
    return Episode(task_id="t-1", sample=2, suite=suite, agent="a", protocol="p", seed=0, status="error",
                   error="RuntimeError: the env broke", error_kind="exception", outcome=outcome)


def _context(tmp_path: Path) -> ArtefactContext:
    return ArtefactContext(run_dir=tmp_path, task=lambda task_id: None)


@pytest.mark.parametrize("suite", SUITES)
def test_an_episode_without_an_outcome_says_so(suite: str, tmp_path: Path) -> None:
    art = build_artefact(suite, _episode(suite, {}), _context(tmp_path))
    assert not art["boxes"] and not art["meshes"]
    text = " ".join([art["summary"], *art["notes"]])
    assert "stored no outcome" in text and "status error: RuntimeError: the env broke" in text, text


def test_a_bimedit_episode_without_an_outcome_says_so(tmp_path: Path) -> None:
    art = build_artefact("bimedit", _episode("bimedit", {}), _context(tmp_path))
    assert art["notes"][0] == "the episode stored no outcome (status error)"
    assert "committed no model" in art["notes"][1]


@pytest.mark.parametrize("suite", sorted(MALFORMED))
def test_a_malformed_outcome_is_one_note_naming_the_run_and_episode(suite: str, tmp_path: Path) -> None:
    art = build_artefact(suite, _episode(suite, MALFORMED[suite]), _context(tmp_path))
    assert art["kind"] == "none" and art["summary"] == "the stored outcome cannot be read"
    (note,) = art["notes"]
    assert note.startswith(f"{tmp_path}: episode 't-1' sample 2: stored outcome unreadable: {suite} outcome: "), note
