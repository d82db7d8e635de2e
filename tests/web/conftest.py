"""Stored runs of every suite (scripted agents, demo split) and a hostile run, made once per session."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness.episode import Episode, Step
from buildbench.harness.store import Store

#: (folder name, suite, agent) of each stored run the tests view; the failing agents make
#: sure verdict colours (failing members, collisions) have something to show.
RUNS: list[tuple[str, str, str]] = [
    ("dreamhouse", "dreamhouse", "fault-overspan-joist"),
    ("buildarena", "buildarena", "reference"),
    ("bimedit", "bimedit", "oracle"),
    ("scenerevis", "scenerevis", "random"),
    ("legoeval", "legoeval", "deterministic"),
    ("example", "example", "reference"),
]

HOSTILE_REPLY = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">**bold** & "quotes"'
HOSTILE_TASK = 'evil<b onmouseover="window.__pwned=3">task</b>'
HOSTILE_IMAGES = ["../../../../etc/passwd", "../run.sqlite", "/etc/hostname", "artifacts/../../outside.png"]


@pytest.fixture(scope="session")
def run_ids() -> dict[str, int]:
    """Each run's id in the viewer: the suites in :data:`RUNS` order, then ``hostile`` and ``big``."""
    ids = {name: i for i, (name, _, _) in enumerate(RUNS)}
    return {**ids, "hostile": len(RUNS), "big": len(RUNS) + 1}


@pytest.fixture(scope="session")
def suite_of() -> dict[str, str]:
    """The suite of each stored suite run, by folder name."""
    return {name: suite for name, suite, _ in RUNS}


@pytest.fixture(scope="session")
def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("viewer-runs")


@pytest.fixture(scope="session")
def stored_runs(run_root: Path) -> dict[str, Path]:
    """Each suite's run folder by name; made with the CLI as a user would."""
    out: dict[str, Path] = {}
    for name, suite, agent in RUNS:
        run_dir = run_root / name
        limit = "1" if suite == "dreamhouse" else "2"
        rc = main(["run", suite, "--agent", agent, "--split", "demo", "--limit", limit, "--run-dir", str(run_dir),
                   "--workers", "0", "--quiet"])
        assert rc in (0, 1), f"buildbench run {suite} exited {rc}"
        out[name] = run_dir
    return out


@pytest.fixture(scope="session")
def hostile_run(run_root: Path) -> Path:
    """A run whose episode carries HTML/script in a reply and in its task id, and image paths
    that point outside the run folder; plus a file outside the run a link inside points at."""
    run_dir = run_root / "hostile"
    outside = run_root / "outside.png"
    outside.write_bytes(b"\x89PNG\r\n\x1a\nsecret outside the run")
    with Store(run_dir) as store:
        store.write_manifest({"config": {"suite": "example", "agent": "evil", "protocol": "one-shot",
                                         "split": "demo", "seed": 0, "samples": 1}, "tasks": 1})
        artifacts = run_dir / "artifacts"
        artifacts.mkdir(exist_ok=True)
        (artifacts / "link.png").symlink_to(outside)
        (artifacts / "page.html").write_text("<script>alert(1)</script>")
        step = Step(index=0, action_text=HOSTILE_REPLY, observation_text="</pre><h1>feedback</h1>",
                    image_paths=[*HOSTILE_IMAGES, "link.png", "page.html"],
                    tool_calls=[{"id": "c1", "name": "<i>tool</i>", "arguments": {"code": "</script><script>x()"}}])
        store.add_episode(Episode(task_id=HOSTILE_TASK, sample=0, suite="example", agent="evil", protocol="one-shot",
                                  seed=0, steps=[step], metrics={"passed": 1.0},
                                  outcome={"blocks": [{"center": [0, 0, 0.5], "size": [1, 1, 1]}]}))
    return run_dir


@pytest.fixture(scope="session")
def big_run(run_root: Path) -> Path:
    """1,200 synthetic episodes (for paging, sorting and filtering), written in one transaction."""
    run_dir = run_root / "big"
    with Store(run_dir) as store:
        store.write_manifest({"config": {"suite": "example", "agent": "synthetic", "protocol": "one-shot",
                                         "split": "default", "seed": 0, "samples": 1}, "tasks": 1200})
    rows = []
    for i in range(1200):
        status = "error" if i % 10 == 0 else "ok"
        metrics = {} if status == "error" else {"passed": float(i % 2), "height_ratio": (i * 37 % 1000) / 1000}
        if i == 5:
            metrics["height_ratio"] = float("nan")
        ep = Episode(task_id=f"tower_{i:05d}", sample=0, suite="example", agent="synthetic", protocol="one-shot",
                     seed=i, status=status, error="boom" if status == "error" else None, metrics=metrics)
        rows.append((ep.task_id, 0, i, status, json.dumps(metrics), "{}", "{}", i / 100, time.time(),
                     json.dumps(ep.to_dict())))
    import sqlite3

    db = sqlite3.connect(run_dir / Store.FILENAME)
    with db:
        db.executemany("INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.close()
    return run_dir


@pytest.fixture(scope="session")
def viewer(stored_runs: dict[str, Path], hostile_run: Path, big_run: Path) -> Iterator[str]:
    """A live viewer of every stored run (ids in :data:`RUNS` order, then hostile, then big)."""
    from buildbench.web.data import ViewerData
    from buildbench.web.runs import open_runs
    from buildbench.web.server import start_server

    dirs = [stored_runs[name] for name, _, _ in RUNS] + [hostile_run, big_run]
    server, thread = start_server(ViewerData(open_runs(dirs)))
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def sweep_runs(run_root: Path) -> list[Path]:
    """A two-point sweep: the repairing tower agent with ``-o max_steps=1`` (it fails: its first
    try is wrong) and ``=3`` (it repairs), 2 tasks × 2 samples each; then a third folder with
    the second run's configuration and tasks holding one more sample per task that ended in an
    error (a resumed run: same identity, so it joins the second column)."""
    out = []
    for steps in (1, 3):
        run_dir = run_root / f"sweep-{steps}"
        rc = main(["run", "example", "--agent", "repairing", "--protocol", "refine", "--split", "demo", "--limit", "2",
                   "--samples", "2", "-o", f"max_steps={steps}", "--run-dir", str(run_dir), "--workers", "0",
                   "--quiet"])
        assert rc in (0, 1), f"buildbench run example exited {rc}"
        out.append(run_dir)
    with Store(out[1], create=False) as store:
        manifest, tasks = store.manifest(), sorted({ep.task_id for ep in store.episodes()})
    resumed = run_root / "sweep-3-resumed"
    with Store(resumed) as store:
        store.write_manifest(manifest)
        for task in tasks:
            store.add_episode(Episode(task_id=task, sample=2, suite="example", agent="repairing", protocol="refine",
                                      seed=0, status="error", error="RuntimeError: the worker died"))
    return [*out, resumed]


@pytest.fixture(scope="session")
def sweep_viewer(sweep_runs: list[Path]) -> Iterator[str]:
    """A live viewer of the sweep (runs 0, 1 and 2)."""
    from buildbench.web.data import ViewerData
    from buildbench.web.runs import open_runs
    from buildbench.web.server import start_server

    server, thread = start_server(ViewerData(open_runs(sweep_runs)))
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def synthetic_run() -> Callable[..., Path]:
    """Makes an example-suite run in a folder with the given ``passed`` values per task (one
    episode per value) and the given seed; its identity differs from another's by seed and tasks.
    ``suite``/``metric`` make a run of another suite whose first headline metric takes the values."""
    def make(folder: Path, seed: int, passed: dict[str, list[float]], *, suite: str = "example",
             metric: str = "passed") -> Path:
        with Store(folder) as store:
            store.write_manifest({"config": {"suite": suite, "agent": "synthetic", "protocol": "one-shot",
                                             "split": "default", "seed": seed, "samples": 2}, "tasks": len(passed)})
            for task, values in passed.items():
                for sample, value in enumerate(values):
                    store.add_episode(Episode(task_id=task, sample=sample, suite=suite, agent="synthetic",
                                              protocol="one-shot", seed=seed,
                                              metrics={metric: value, "blocks": 3.0}))
        return folder

    return make
