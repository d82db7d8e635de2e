"""scenes evaluate on ProcTHOR houses of several rooms: SceneReVis scores each room as a task, so the
run expects an episode per room (its manifest counted the houses, and the report read 6 episodes
of 3 expected for three two-room houses)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

from buildbench.cli.main import main

HOUSE = Path(__file__).parent / "fixtures" / "procthor_zg_house_100.json"  # two rooms


def _report(run: Path) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(run), "--json"]) == 0
    return json.loads(out.getvalue())


def test_expected_episodes_count_rooms(tmp_path: Path) -> None:
    gen = tmp_path / "houses"
    gen.mkdir()
    for name in ("a.json", "b.json"):
        shutil.copy(HOUSE, gen / name)
    (gen / "prompts.jsonl").write_text("".join(
        json.dumps({"scene": n, "instruction": "A bathroom with a toilet and a bedroom with a bed."}) + "\n"
        for n in ("a.json", "b.json")))
    run = tmp_path / "run"
    assert main(["scenes", "evaluate", str(gen), "--format", "procthor", "--run-dir", str(run)]) == 0
    for suite, expected in (("scenerevis", 4), ("legoeval", 2)):
        fields = _report(run / suite)
        assert (fields["episodes"], fields["expected_episodes"]) == (expected, expected)
