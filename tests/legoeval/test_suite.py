"""The suite registered through its entry point, run end to end with ``buildbench run``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness import ConfigError, get_suite, suite_names


def test_the_suite_is_registered_with_its_agents_and_protocol() -> None:
    assert "legoeval" in suite_names()
    suite = get_suite("legoeval")
    assert {"llm", "deterministic", "vlm-judge", "sceneeval", "always-valid", "always-invalid"} <= set(suite.agents)
    assert suite.default_protocol == "evaluate" and suite.splits == ("default", "demo", "legobench")
    assert [t.metadata["aligned"] for t in suite.load_tasks("demo", 0)[:2]] == [True, False]
    with pytest.raises(ConfigError, match="no split 'huge'"):
        suite.load_tasks("huge", 0)


def _report(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(["report", str(run_dir), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("agent, holistic", [("deterministic", 1.0), ("always-invalid", 0.5)])
def test_buildbench_run_on_the_demo_split(agent: str, holistic: float, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / agent
    code = main(["run", "legoeval", "--agent", agent, "--split", "demo", "--run-dir", str(run_dir),
                 "--workers", "0", "-q"])
    assert code == 0
    report = _report(run_dir, capsys)
    assert report["episodes"] == 12 and report["status"] == {"ok": 12}
    assert report["metrics"]["holistic_correct"] == pytest.approx(holistic)
    ours = next(r for r in report["tables"]["Table 1: agreement with labels"] if agent in str(r.values()))
    assert ours["hol_f1"] == pytest.approx(1.0 if agent == "deterministic" else 1 / 3, abs=1e-3)


def test_demo_parts_run_offline(tmp_path: Path) -> None:
    from buildbench.suites.legoeval.demo import run_benchmark, run_llm_pipeline

    groups = run_benchmark(tmp_path, ("always-invalid",), split="demo")
    assert len(groups["always-invalid"]) == 12 and (tmp_path / "legoeval-always-invalid").is_dir()
    episodes = run_llm_pipeline(1)
    assert [ep.outcome["valid"] for ep in episodes] == [True, False]
    assert all(ep.metrics["holistic_correct"] == 1.0 for ep in episodes)
    images = [k for ep in episodes for step in ep.outcome["trace"] for c in step["calls"] for k in c["image_keys"]]
    assert images and all(k.endswith("*/*output__image") for k in images)


def test_legobench_split_reads_the_folder_named_by_the_environment(monkeypatch) -> None:
    from pathlib import Path

    from buildbench.harness import ConfigError
    from buildbench.suites.legoeval.suite import LEGOBENCH_ENV, load_tasks

    monkeypatch.delenv(LEGOBENCH_ENV, raising=False)
    with pytest.raises(ConfigError, match=LEGOBENCH_ENV):
        load_tasks("legobench", 0)
    monkeypatch.setenv(LEGOBENCH_ENV, str(Path(__file__).parent / "fixtures" / "legobench_tiny"))
    tasks = load_tasks("legobench", 0)
    assert tasks and all(t.suite == "legoeval" for t in tasks)
    monkeypatch.setenv(LEGOBENCH_ENV, "/nonexistent/folder")
    with pytest.raises(ConfigError, match="/nonexistent/folder"):
        load_tasks("legobench", 0)
