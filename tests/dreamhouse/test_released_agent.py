"""``--agent released:FILE:generate``: agents written for the released DreamHouse CLI run by our
harness through the command line, called as the released quickstart calls them, and scored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from buildbench.cli.main import cli, main
from buildbench.harness.store import Store
from buildbench.suites.dreamhouse.check import RELEASED_TESTS
from buildbench.suites.dreamhouse.model import load_structure
from buildbench.suites.dreamhouse.scripts import structure_to_bpy

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "dreamhouse_released_agent.py"
PASSING = ROOT / "examples" / "files" / "house.json"
VIEW_FILES = ["front.png", "back.png", "left.png", "right.png", "top.png"]

#: A released-style agent that logs each call (as the released CLI makes it) and answers ``CODE``.
AGENT_TEMPLATE = '''
import json
from pathlib import Path

CODE = {code!r}
LOG = Path({log!r})


def generate(prompt, images, feedback):
    record = {{"prompt": prompt, "images": images, "exist": [Path(p).is_file() for p in images],
               "feedback": feedback}}
    with LOG.open("a") as fh:
        fh.write(json.dumps(record) + "\\n")
    feedback.append({{"changed": "by the agent"}})  # must not leak into the next call
    return CODE
'''


def _agent_file(tmp_path: Path, code: str) -> tuple[Path, Path]:
    log = tmp_path / "calls.jsonl"
    path = tmp_path / "agent.py"
    path.write_text(AGENT_TEMPLATE.format(code=code, log=str(log)))
    return path, log


def _run(tmp_path: Path, agent: str, *options: str, protocol: str = "planner-atomic") -> tuple[Result, Path]:
    run_dir = tmp_path / "run"
    args = ["run", "dreamhouse", "--agent", agent, "--protocol", protocol, "--split", "demo", "--limit", "1",
            "--run-dir", str(run_dir), "-q", "-o", "profile=released", *options]
    return CliRunner().invoke(cli, args), run_dir


def _episode(run_dir: Path) -> Any:
    with Store(run_dir, create=False) as store:
        episodes = list(store.episodes())
    assert len(episodes) == 1
    return episodes[0]


def _calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_passing_released_agent_is_called_once_and_scored(tmp_path: Path) -> None:
    code = structure_to_bpy(load_structure(PASSING), "COLLECTION_NAME", clear=True)
    agent, log = _agent_file(tmp_path, code)
    result, run_dir = _run(tmp_path, f"released:{agent}:generate", "-o", "require_visual=false")
    assert result.exit_code == 0, result.output
    episode = _episode(run_dir)
    assert episode.status == "ok"
    assert episode.metrics["structural_pass"] == 1.0
    assert episode.agent == f"released:{agent}:generate"
    calls = _calls(log)
    assert len(calls) == 1
    call = calls[0]
    assert call["prompt"].startswith("Build a Generate a 1-story")
    assert call["feedback"] == []
    assert [Path(p).name for p in call["images"]] == VIEW_FILES and all(call["exist"])
    assert "released-agent adapter" in (episode.steps[0].action_text or "")


def test_a_failing_released_agent_gets_the_released_feedback_list(tmp_path: Path) -> None:
    agent, log = _agent_file(tmp_path, _sill_code())
    result, run_dir = _run(tmp_path, f"released:{agent}:generate", "-o", "step_retries=2", "-o", "images=off")
    assert result.exit_code == 0, result.output
    episode = _episode(run_dir)
    assert episode.status == "ok" and episode.metrics["structural_pass"] == 0.0
    calls = _calls(log)
    assert len(calls) == 3
    assert [len(c["feedback"]) for c in calls] == [0, 1, 2]
    assert all(c["images"] == [] for c in calls)
    first = calls[2]["feedback"][0]
    assert first["attempt"] == 1 and first["status"] == "failed" and first["all_passed"] is False
    assert list(first["tests"]) == list(RELEASED_TESTS)
    assert first["failed_tests"] == [t for t, ok in first["tests"].items() if not ok]
    assert first["pass_rate"] == sum(first["tests"].values()) / 10
    assert first["member_count"] == 4
    assert "[VALIDATION FAILED]" in first["feedback"]
    assert calls[2]["feedback"][1]["attempt"] == 2


def test_a_script_error_is_reported_as_a_blender_error(tmp_path: Path) -> None:
    agent, log = _agent_file(tmp_path, "import bpy\nraise RuntimeError('rafters missing')\n")
    result, _ = _run(tmp_path, f"released:{agent}:generate", "-o", "step_retries=1", "-o", "images=off")
    assert result.exit_code == 0, result.output
    entry = _calls(log)[1]["feedback"][0]
    assert entry["status"] == "blender_error" and "rafters missing" in entry["error"]
    assert len(entry["error"]) <= 200


def test_the_shipped_example_runs(tmp_path: Path) -> None:
    result, run_dir = _run(tmp_path, f"released:{EXAMPLE}:generate", "-o", "step_retries=0", "-o", "images=off")
    assert result.exit_code == 0, result.output
    episode = _episode(run_dir)
    assert episode.status == "ok" and episode.metrics["members"] > 10


@pytest.mark.parametrize(("body", "needle"), [
    ("def generate(prompt, images, feedback):\n    raise KeyError('no model key')\n", "KeyError"),
    ("def generate(prompt, images, feedback):\n    return None\n", "non-empty Blender Python"),
])
def test_an_agent_failure_is_an_unscored_error(tmp_path: Path, body: str, needle: str) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(body)
    result, run_dir = _run(tmp_path, f"released:{agent}:generate", "-o", "images=off")
    episode = _episode(run_dir)
    assert episode.status != "ok" and needle in (episode.error or "")
    assert "structural_pass" not in episode.metrics


def test_step_protocols_are_refused_with_a_reason(tmp_path: Path) -> None:
    result, run_dir = _run(tmp_path, f"released:{EXAMPLE}:generate", "-o", "images=off",
                           protocol="planner-managed")
    episode = _episode(run_dir)
    assert episode.status != "ok" and "per-step" in (episode.error or "")


def test_a_missing_agent_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "dreamhouse", "--agent", f"released:{tmp_path / 'nope.py'}:generate", "--split", "demo",
            "--limit", "1", "--run-dir", str(tmp_path / "run"), "-q"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "nope.py" in err and len(err.strip().splitlines()) == 1


def _sill_code() -> str:
    """Four sill plates around a 6 m x 8 m footprint (fails the wall and roof tests)."""
    return (
        "import bpy\n"
        "col = bpy.data.collections.get('COLLECTION_NAME') or bpy.data.collections.new('COLLECTION_NAME')\n"
        "if col.name not in bpy.context.scene.collection.children:\n"
        "    bpy.context.scene.collection.children.link(col)\n"
        "for old in list(col.objects):\n"
        "    bpy.data.objects.remove(old, do_unlink=True)\n"
        "for name, loc, dims in [('Sill_01', (3, 0, 0.019), (6, 0.14, 0.038)),\n"
        "                        ('Sill_02', (3, 8, 0.019), (6, 0.14, 0.038)),\n"
        "                        ('Sill_03', (0, 4, 0.019), (0.14, 8, 0.038)),\n"
        "                        ('Sill_04', (6, 4, 0.019), (0.14, 8, 0.038))]:\n"
        "    bpy.ops.mesh.primitive_cube_add(size=1, location=loc)\n"
        "    obj = bpy.context.active_object\n"
        "    obj.name, obj.scale = name, dims\n"
        "    bpy.ops.object.transform_apply(scale=True)\n"
        "    for c in obj.users_collection:\n"
        "        c.objects.unlink(obj)\n"
        "    col.objects.link(obj)\n"
    )
