"""--errors-as-failures keeps the failure visible: an unscored episode counted as a failure is
counted under what it was (``api_error (counted as failed)``), alike in the table, --json and
compare; never as ``ok``."""

from __future__ import annotations

import json
from pathlib import Path

from buildbench.cli import main
from buildbench.harness import RunConfig, Runner
from buildbench.harness.compare import compare_runs
from buildbench.harness.episode import Episode
from buildbench.harness.report import run_report
from buildbench.harness.store import Store

COUNTED = "api_error (counted as failed)"


def _run_with_an_api_error(run_dir: Path) -> Path:
    Runner(RunConfig(suite="example", agent="reference", protocol="one-shot", split="demo", limit=1,
                     workers=0), run_dir).run()
    with Store(run_dir) as store:
        (done,) = list(store.episodes())
        store.add_episode(Episode(task_id=done.task_id, sample=1, suite="example", agent="reference",
                                  protocol="one-shot", seed=1, status="api_error", error="endpoint down",
                                  error_kind="api_error"))
    return run_dir


def test_report_json_counts_the_error_as_what_it_was(tmp_path: Path, capsys) -> None:
    run = _run_with_an_api_error(tmp_path / "run")
    assert main(["report", str(run), "--json", "--errors-as-failures"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == {"ok": 1, COUNTED: 1} and data["unscored"] == 1
    assert data["metrics"]["passed"] == 0.5  # the failure is in the mean
    assert main(["report", str(run), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["status"] == {"ok": 1, "api_error": 1} and plain["metrics"]["passed"] == 1.0


def test_table_and_compare_agree_with_json(tmp_path: Path, capsys) -> None:
    run = _run_with_an_api_error(tmp_path / "run")
    assert main(["report", str(run), "--errors-as-failures"]) == 0
    table = capsys.readouterr().out
    assert COUNTED in table and "ok: 2" not in table
    rows = compare_runs([run], errors_as_failures=True)["rows"]
    assert rows[0]["status"] == run_report(run, errors_as_failures=True)["status"] == {"ok": 1, COUNTED: 1}
