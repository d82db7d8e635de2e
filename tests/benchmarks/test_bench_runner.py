"""benchmarks/run.py: each benchmark in its own process, failures named, skipped baselines kept.

No timing is asserted (performance lives in ``make bench``); these check the runner's rules.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import run  # noqa: E402
from _common import SLOWDOWN_ENV, Figure, check_run, scaled_limit, slowdown  # noqa: E402


def _bench(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"bench_{name}.py"
    path.write_text(body)
    return path


def test_figures_come_back_from_the_benchmarks_own_process(tmp_path: Path) -> None:
    path = _bench(tmp_path, "ok", (
        "import os\nfrom _common import Figure\n"
        "def run():\n"
        "    return [Figure('pid', float(os.getpid()), baseline_skipped='not installed', unit='slope')]\n"))
    figures, failure, _ = run._run_one(path, 120)
    assert failure is None
    [figure] = figures
    assert figure.seconds != float(__import__("os").getpid())  # another process made it
    assert figure.baseline_skipped == "not installed" and figure.unit == "slope" and figure.speedup is None


def test_a_raising_or_hanging_benchmark_is_a_named_failure(tmp_path: Path) -> None:
    raising = _bench(tmp_path, "raising", "def run():\n    raise ValueError('boom')\n")
    figures, failure, _ = run._run_one(raising, 120)
    assert figures == [] and failure is not None and failure.startswith("bench_raising: exited 1")
    hanging = _bench(tmp_path, "hanging", "import time\ndef run():\n    time.sleep(60)\n")
    figures, failure, wall = run._run_one(hanging, 2)
    assert figures == [] and failure == "bench_hanging: passed its limit of 2 s wall" and wall < 30


def test_main_writes_results_and_exits_1_only_on_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SLOWDOWN_ENV, "1")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run, "HERE", tmp_path)
    _bench(tmp_path, "good", ("from _common import Figure\ndef run():\n"
                              "    return [Figure('good', 1.0, baseline_seconds=2.0, target_seconds=0.5)]\n"))
    assert run.main(["run.py", "good"]) == 0  # a missed target is reported, not a failure
    # A chosen subset writes a file of its own: the full run's results.json is never replaced by it.
    assert not (tmp_path / "bench-results" / "results.json").exists()
    results = json.loads((tmp_path / "bench-results" / "results-good.json").read_text())
    assert [f["name"] for f in results["figures"]] == ["good"] and results["failures"] == []
    assert results["figures"][0]["meets_target"] is False
    _bench(tmp_path, "bad", "def run():\n    raise RuntimeError('x')\n")
    assert run.main(["run.py"]) == 1
    results = json.loads((tmp_path / "bench-results" / "results.json").read_text())
    assert [f["name"] for f in results["figures"]] == ["good"]
    assert [b["benchmark"] for b in results["benchmarks"]] == ["bench_bad", "bench_good"]


def test_slowdown_stretches_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    slowdown.cache_clear()
    monkeypatch.setenv(SLOWDOWN_ENV, "3")
    try:
        assert slowdown() == 3.0 and scaled_limit(180) == 540
    finally:
        slowdown.cache_clear()
    monkeypatch.setenv(SLOWDOWN_ENV, "0.5")  # never tighter than the reference
    try:
        assert slowdown() == 1.0
    finally:
        slowdown.cache_clear()
    monkeypatch.delenv(SLOWDOWN_ENV)
    try:
        assert slowdown() >= 1.0  # measured
    finally:
        slowdown.cache_clear()
    assert Figure.from_dict(Figure("a", 2.0, baseline_seconds=4.0).to_dict()).speedup == 2.0


def test_a_benchmark_may_send_its_own_functions_to_a_worker_process(tmp_path: Path) -> None:
    path = _bench(tmp_path, "pool", (
        "import multiprocessing as mp\nfrom _common import Figure\n"
        "def _square(x):\n    return x * x\n"
        "def run():\n"
        "    with mp.get_context('forkserver').Pool(1) as pool:\n"
        "        return [Figure('square', float(pool.apply(_square, (3,))), baseline_seconds=1.0)]\n"))
    figures, failure, _ = run._run_one(path, 120)
    assert failure is None and [f.seconds for f in figures] == [9.0]


def test_words_that_name_no_benchmark_are_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # `make bench BENCH=buildarena-sim` once ran nothing and exited 0 with an empty table.
    monkeypatch.setenv(SLOWDOWN_ENV, "1")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run, "HERE", tmp_path)
    _bench(tmp_path, "good_one", "from _common import Figure\ndef run():\n    return [Figure('good', 1.0, baseline_seconds=1.0)]\n")
    assert run.main(["run.py", "nosuch"]) == 2
    assert capsys.readouterr().err.startswith("error: no benchmark's name contains 'nosuch'; the benchmarks: good_one")
    assert not (tmp_path / "bench-results").exists()
    assert run.main(["run.py", "good-one"]) == 0  # a hyphen stands for the file name's underscore
    assert (tmp_path / "bench-results" / "results-good_one.json").exists()


def test_a_figure_without_baseline_or_reason_fails_its_benchmark(tmp_path: Path) -> None:
    # A time alone is no figure on a shared machine; a baseline that cannot run says why.
    path = _bench(tmp_path, "bare", (
        "from _common import Figure\ndef run():\n"
        "    return [Figure('timed', 1.0, baseline_seconds=2.0), Figure('alone', 1.0),\n"
        "            Figure('explained', 1.0, baseline_skipped='no original runs here')]\n"))
    figures, failure, _ = run._run_one(path, 120)
    assert [f.name for f in figures] == ["timed", "alone", "explained"]  # kept, and reported
    assert failure == "bench_bare: 1 figure(s) with no baseline and no reason (baseline_skipped): alone"


def test_each_benchmark_has_its_own_temporary_folder(tmp_path: Path) -> None:
    # A benchmark neither sees what others leave in the shared /tmp nor leaves anything there.
    path = _bench(tmp_path, "tmp", (
        "import tempfile\nfrom pathlib import Path\nfrom _common import Figure\n"
        "def run():\n"
        "    left = Path(tempfile.mkdtemp(prefix='left-'))\n"
        "    return [Figure(str(left), 1.0, baseline_seconds=1.0)]\n"))
    [figure], failure, _ = run._run_one(path, 120)
    left = Path(figure.name)
    assert failure is None and left.parent.name.startswith("bench-")
    assert left.parent.parent == Path(tempfile.gettempdir())
    assert not left.parent.exists()


def test_a_timed_harness_run_counts_only_when_every_episode_ended_ok() -> None:
    # Episodes that crashed (a worker that could not import the package) take time but do no work.
    class Result:
        ran = 3
        summary = {"status": {"ok": 2, "error": 1}}

    with pytest.raises(RuntimeError, match=r"expected 3 episodes, each ok; ran 3, status \{'ok': 2, 'error': 1\}"):
        check_run(Result(), 3)
    Result.summary = {"status": {"ok": 3}}
    check_run(Result(), 3)
    with pytest.raises(RuntimeError):
        check_run(Result(), 4)
