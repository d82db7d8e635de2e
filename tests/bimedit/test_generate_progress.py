"""``bimedit generate`` on synthetic scenes tells its progress as ``--ifc`` does and as a run does:
off a terminal, ``progress bimedit generate: DONE/TOTAL tasks`` lines on stderr (it showed nothing
until it ended), counted as each scene's tasks are made and never past the count asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from buildbench.suites.bimedit.generate.tasks import generate_tasks


def test_progress_counts_up_to_the_requested_tasks(tmp_path: Path) -> None:
    told: list[tuple[int, int]] = []
    tasks = generate_tasks(5, 0, tmp_path, progress=lambda done, total: told.append((done, total)))
    assert len(tasks) == 5 and len(told) > 1  # one step per scene: five tasks lie in several scenes
    assert {total for _, total in told} == {5}
    counts = [done for done, _ in told]
    assert counts == sorted(set(counts)) and counts[-1] == 5


def test_the_command_shows_progress_off_a_terminal(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "buildbench", "bimedit", "generate", "--n", "2", "--out",
                          str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    counts = [part.split()[0] for part in res.stderr.split("progress bimedit generate: ")[1:]]
    assert counts and counts[-1] == "2/2", res.stderr
    assert "wrote 2 tasks" in res.stdout
