"""Task statements reveal no more than the released prompts; the released levels.yaml can replace them."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildbench.suites.buildarena.env import BuildArenaEnv
from buildbench.suites.buildarena.options import BuildArenaOptions
from buildbench.suites.buildarena.suite import to_task
from buildbench.suites.buildarena.tasks import TASKS, load_levels

LEVELS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "buildarena" / "levels.yaml"


@pytest.mark.parametrize("task_id", list(TASKS))
def test_texts_state_no_pass_threshold(task_id: str) -> None:
    text = TASKS[task_id].text
    for threshold in ("10 units away", "more than 10", "30 units", "keep climbing", "thrust-to-weight", "2 s"):
        assert threshold not in text, (task_id, threshold)


def test_released_levels_file_replaces_the_texts(tmp_path: Path) -> None:
    if not LEVELS.exists():
        pytest.skip(f"released levels.yaml not present at {LEVELS}")
    texts = load_levels(LEVELS)
    assert sorted(texts) == sorted(TASKS)
    assert "Use no more than 3 sub-structures." in texts["support-2"]
    env = BuildArenaEnv(to_task("lift-1"), BuildArenaOptions(levels=str(LEVELS)))
    observation = env.reset(to_task("lift-1")).observation
    assert "Build a single rocket engine capable of providing propulsion" in observation.text


def test_a_foreign_levels_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "levels.yaml"
    bad.write_text("level: extreme\ncategory: transport\ntask: go\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown task"):
        load_levels(bad)
    with pytest.raises(ValueError, match="levels file"):
        load_levels(tmp_path / "missing.yaml")
