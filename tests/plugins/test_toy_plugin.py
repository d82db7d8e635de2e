"""A suite from outside the repository, registered only through the ``buildbench.suites`` entry
point, is listed by ``buildbench suites`` and runs like a bundled one (in-process and in workers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from buildbench.harness.suite import get_suite, suite_names, suite_target

TOY = Path(__file__).resolve().parent / "toy_suite"


def _install(site: Path) -> Path:
    """Write the toy package's dist-info into ``site`` as an installer would; return ``site``."""
    meta = tomllib.loads((TOY / "pyproject.toml").read_text())["project"]
    dist = site / f"buildbench_toy_suite-{meta['version']}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {meta['version']}\n")
    lines = [f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items())
             for group, eps in meta["entry-points"].items()]
    (dist / "entry_points.txt").write_text("\n".join(lines))
    return site


@pytest.fixture
def toy_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    site = _install(tmp_path / "site")
    monkeypatch.syspath_prepend(str(TOY))
    monkeypatch.syspath_prepend(str(site))
    return os.pathsep.join([str(site), str(TOY)])


def test_every_bundled_suite_is_an_entry_point() -> None:
    names = suite_names()
    for name in ("example", "dreamhouse", "buildarena", "bimedit", "legoeval", "scenerevis"):
        assert name in names
        assert suite_target(name).startswith(f"buildbench.suites.{name}.")


def test_toy_is_found_without_the_harness_naming_it(toy_path: str) -> None:
    assert "toy" in suite_names()
    assert suite_target("toy") == "toy_suite.suite:suite"
    assert get_suite("toy").name == "toy"


def _cli(args: list[str], pythonpath: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [pythonpath, os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "buildbench", *args], capture_output=True, text=True,
                          timeout=180, env=env, cwd=cwd)


@pytest.mark.parametrize("workers", ["0", "1"])
def test_toy_is_listed_and_runs_from_the_cli(toy_path: str, tmp_path: Path, workers: str) -> None:
    listed = _cli(["suites", "--json"], toy_path, tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["toy"]["agents"] == ["exact"] and rows["toy"]["splits"] == ["default", "demo"]

    run_dir = tmp_path / f"run{workers}"
    ran = _cli(["run", "toy", "--split", "default", "--workers", workers, "--run-dir", str(run_dir), "-q"],
               toy_path, tmp_path)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(_cli(["report", str(run_dir), "--json"], toy_path, tmp_path).stdout)
    assert report["episodes"] == 3 and report["unscored"] == 0
    assert report["metrics"]["passed"] == 1.0


def test_unknown_suite_lists_the_registered_ones(tmp_path: Path) -> None:
    proc = _cli(["run", "no-such-suite"], "", tmp_path)
    assert proc.returncode == 2
    assert "unknown suite 'no-such-suite'" in proc.stderr and "example" in proc.stderr


def test_toy_gets_a_gymnasium_id_like_the_bundled_suites(toy_path: str) -> None:
    gymnasium = pytest.importorskip("gymnasium", reason="the gym extra (gymnasium) is not installed")
    from gymnasium.utils.env_checker import check_env

    from buildbench.gym import register_suites

    assert "buildbench/Toy-v0" in register_suites()
    env = gymnasium.make("buildbench/Toy-v0", split="demo")
    check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset()
    assert obs["text"].startswith("Lay a row of 4 bricks")
    obs, reward, terminated, _, info = env.step("4")
    assert (reward, terminated, info["metrics"]) == (1.0, True, {"passed": 1.0})
