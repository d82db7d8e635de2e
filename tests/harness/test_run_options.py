"""Every reader that hands a run's episodes to its suite's summarizer (``buildbench report``, the
comparison of several runs, the runner's own summary) puts the run's given options on each
episode (``metadata["run_options"]``), in memory only; the store is unchanged."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from buildbench.harness import Episode, RunConfig, Runner, Store
from buildbench.harness import suite as suite_module
from buildbench.harness.compare import compare_runs
from buildbench.harness.episode import as_failure
from buildbench.harness.report import run_report
from buildbench.harness.run_options import RUN_OPTIONS, given_run_options, with_run_options
from buildbench.harness.suite import get_suite, mean_metrics


def _ep(task: str, status: Any = "ok") -> Episode:
    return Episode(task_id=task, sample=0, suite="example", agent="reference", protocol="refine", seed=0,
                   status=status, metrics={"passed": 1.0} if status == "ok" else {})


def test_each_episode_gets_its_run_s_given_options() -> None:
    episodes = with_run_options([_ep("a"), _ep("b", "error")], {"options": {"max_steps": 2}})
    assert [given_run_options(ep) for ep in episodes] == [{"max_steps": 2}, {"max_steps": 2}]
    # Kept when an unscored episode is counted as a failure (--errors-as-failures).
    assert given_run_options(as_failure(episodes[1], {"passed": 0.0})) == {"max_steps": 2}


@pytest.mark.parametrize("config", [{}, {"options": None}, {"options": ["max_steps"]}, {"options": "x"}])
def test_a_config_without_an_options_mapping_puts_nothing(config: dict[str, Any]) -> None:
    (episode,) = with_run_options([_ep("a")], config)
    assert RUN_OPTIONS not in episode.metadata and given_run_options(episode) is None


def test_an_episode_read_without_its_run_has_no_run_options() -> None:
    assert given_run_options(_ep("a")) is None
    assert given_run_options(Episode("a", 0, "example", "r", "p", 0, metadata={RUN_OPTIONS: 3})) is None


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[list[Any]]:
    """The run options of the episodes each call of the example suite's summarizer got."""
    calls: list[list[Any]] = []

    def spy(episodes: Sequence[Episode]) -> dict[str, Any]:
        calls.append([given_run_options(ep) for ep in episodes])
        return mean_metrics(episodes)

    example = get_suite("example")
    monkeypatch.setitem(suite_module._loaded, "example", dataclasses.replace(example, summarize=spy))
    return calls


def _stored(run_dir: Path, options: dict[str, Any]) -> Path:
    with Store(run_dir) as store:
        store.write_manifest({"config": {"suite": "example", "agent": "reference", "protocol": "refine",
                                         "options": options}, "tasks": 2})
        store.add_episode(_ep("a"))
        store.add_episode(_ep("b", "error"))
    return run_dir


@pytest.mark.parametrize("errors_as_failures", [False, True])
def test_reports_hand_the_summarizer_each_run_s_options(tmp_path: Path, seen: list[list[Any]],
                                                       errors_as_failures: bool) -> None:
    one, two = _stored(tmp_path / "one", {"max_steps": 2}), _stored(tmp_path / "two", {"max_steps": 5})
    run_report(one, errors_as_failures=errors_as_failures)
    assert seen == [[{"max_steps": 2}] * 2]
    seen.clear()
    compare_runs([one, two], errors_as_failures=errors_as_failures)
    assert sorted(seen, key=repr) == [[{"max_steps": 2}] * 2, [{"max_steps": 5}] * 2]
    with Store(one, create=False) as store:  # read in memory only
        assert all(RUN_OPTIONS not in ep.metadata for ep in store.episodes())


def test_the_runner_s_summary_gets_the_run_s_options(tmp_path: Path, seen: list[list[Any]]) -> None:
    config = RunConfig(suite="example", agent="reference", protocol="refine", split="demo", limit=2, workers=0,
                       options={"max_steps": 2})
    Runner(config, tmp_path / "run").run()
    assert seen == [[{"max_steps": 2}] * 2]
