"""A task's own models are opened lazily (issue 24); a malformed entity must still fail the same
way: an unreadable prediction scores 0 with its reason, a malformed task model is a ValueError."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildbench.suites.bimedit.check.edit import MODEL_CACHE, score_edit

GOOD = Path(__file__).parent / "fixtures" / "tiny_house_ifc4x3_ft.ifc"


@pytest.fixture
def malformed(tmp_path: Path) -> Path:
    """The tiny house with one point given an attribute the parser cannot read."""
    lines = GOOD.read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if "IFCCARTESIANPOINT" in line.upper())
    lines[i] = lines[i].rstrip(");") + "),@@@);"
    path = tmp_path / "malformed.ifc"
    path.write_text("\n".join(lines))
    return path


def test_malformed_prediction_scores_zero_as_unreadable(malformed: Path) -> None:
    MODEL_CACHE.clear()
    s = score_edit(GOOD, GOOD, malformed, {"operation": "update"})
    assert (s.geometry, s.semantics, s.topology, s.solved) == (0.0, 0.0, 0.0, False)
    assert s.reason.startswith("prediction unreadable:") and "not a readable IFC file" in s.reason


@pytest.mark.parametrize("which", ["input", "ground truth"])
def test_malformed_task_model_is_a_task_error(malformed: Path, which: str) -> None:
    MODEL_CACHE.clear()
    m0, gt = (malformed, GOOD) if which == "input" else (GOOD, malformed)
    with pytest.raises(ValueError, match="task T1: .*cannot be read"):
        score_edit(m0, gt, GOOD, {"operation": "update", "task_id": "T1"})
