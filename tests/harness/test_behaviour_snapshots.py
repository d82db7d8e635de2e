"""Behaviour snapshots: what the option handling decides must not change when it is refactored.

Recorded once and compared on every run: each suite's demo-episode outcome and metrics for its
scripted agents (with and without options), the resolved options listing (``buildbench suites
--json``) and the example demo's table. A deliberate change regenerates them with
``BUILDBENCH_UPDATE_SNAPSHOTS=1`` (and the diff is reviewed like code).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from buildbench.cli import demo
from buildbench.cli.main import cli
from buildbench.harness import RunConfig, execute_episode, get_suite

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = bool(os.environ.get("BUILDBENCH_UPDATE_SNAPSHOTS"))

#: (suite, agent, protocol, options): scripted agents only, on the first demo task; the options
#: cover every kind (int, float, bool, choice, int-or-full, float-or-none) reaching env, agent
#: and protocol factories.
EPISODES: list[tuple[str, str, str, dict[str, Any]]] = [
    ("example", "reference", "refine", {}),
    ("example", "short", "refine", {"max_steps": 2}),
    ("example", "floating", "one-shot", {}),
    ("legoeval", "deterministic", "evaluate", {}),
    ("legoeval", "deterministic", "evaluate", {"render": "false", "max_steps": 5, "wall_midpoint_positions": True}),
    ("legoeval", "sceneeval", "evaluate", {}),
    ("scenerevis", "diagnose", "diagnose-act", {}),
    ("scenerevis", "one-pass", "diagnose-act", {"max_turns": 2, "render": False, "feedback": "no"}),
    ("bimedit", "oracle", "tool-loop", {}),
    ("bimedit", "noop", "tool-loop", {"max_calls": 3, "strict": True}),
    ("buildarena", "reference", "workflow", {}),
    ("buildarena", "negative", "workflow", {"max_shift": "none", "control_trials": 2}),
    ("dreamhouse", "oracle", "planner-atomic", {"images": "off"}),
    ("dreamhouse", "fault-no-roof", "iterative-refinement", {"images": "off", "revisions": 1, "history": "full"}),
]


#: Wall-clock measurements inside outcomes: the one part of an episode that differs between runs.
TIMING_KEYS = frozenset({"latency_s", "duration_s"})


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _check(name: str, value: Any, tmp: Path) -> None:
    path = SNAPSHOTS / f"{name}.json"
    # the test's own folder is the one thing that differs between runs
    text = json.dumps(_untimed(value), indent=1, sort_keys=True, default=str).replace(str(tmp), "<tmp>") + "\n"
    if UPDATE:
        path.write_text(text)
    assert path.exists(), f"no snapshot {path.name}: record it with BUILDBENCH_UPDATE_SNAPSHOTS=1"
    assert json.loads(text) == _untimed(json.loads(path.read_text())), f"{path.name} changed"


def _episode(suite_name: str, agent: str, protocol: str, options: dict[str, Any], tmp: Path) -> dict[str, Any]:
    from buildbench.harness.options import check_options

    suite = get_suite(suite_name)
    config = RunConfig(suite=suite_name, agent=agent, protocol=protocol, split="demo", limit=1, workers=0,
                       options=check_options(options, suite.option_specs(), where=suite_name))
    task = suite.load_tasks("demo", 0)[0]
    episode = asyncio.run(execute_episode(config, task, 0, tmp))
    assert episode.status == "ok", episode.error
    return {"task": task.id, "outcome": episode.outcome, "metrics": episode.metrics}


@pytest.mark.parametrize("case", EPISODES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{len(c[3])}")
def test_demo_episode_outcomes_are_unchanged(case: tuple[str, str, str, dict[str, Any]], tmp_path: Path) -> None:
    suite, agent, protocol, options = case
    suffix = "-".join(f"{k}={v}" for k, v in sorted(options.items()))
    _check(f"episode-{suite}-{agent}-{protocol}{'-' + suffix if suffix else ''}",
           _episode(suite, agent, protocol, options, tmp_path), tmp_path)


def test_the_options_listing_is_unchanged(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["suites", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    _check("suites", [{k: row[k] for k in ("name", "agents", "protocols", "splits", "options", "defaults")}
                      for row in rows], tmp_path)


def test_the_example_demo_table_is_unchanged(tmp_path: Path) -> None:
    """The table, and (moved here from tests/cli/test_demo.py so the eight runs are played once)
    that each run is announced before its table and every line fits ``demo.TABLE_WIDTH``."""
    console = Console(width=demo.TABLE_WIDTH, record=True, color_system=None)
    demo.run_demo(tmp_path / "runs", ("example",), console=console)
    text = console.export_text()
    first_run = text.index("running example / reference / one-shot")
    assert first_run < text.index("done: ") < text.index("example suite (demo split)")
    assert text.count("running example / ") == 8
    assert max(len(line) for line in text.splitlines()) <= demo.TABLE_WIDTH
    # progress lines and the closing wall-clock line vary from run to run
    # the closing hint names the test's folder, and wraps where that path's length says
    text = text.split("runs stored under")[0]
    tables = [line for line in text.splitlines()
              if "running" not in line and "done:" not in line and not re.fullmatch(r"\w+: [0-9.]+ s", line)]
    _check("demo-example", tables, tmp_path)
