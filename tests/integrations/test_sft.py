"""``buildbench export RUN --format sft`` on a tiny stored run of every suite (scripted agents)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from buildbench.cli import main
from buildbench.cli.main import cli
from buildbench.harness import RunConfig, Runner, Store, get_suite
from buildbench.harness.sft import export_sft

load_from_disk = pytest.importorskip("datasets", reason="datasets (the train extra) is not installed").load_from_disk

SUITES = ("example", "dreamhouse", "buildarena", "bimedit", "legoeval", "scenerevis")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One demo episode of each suite with its default scripted agent and protocol."""
    out = {}
    for name in SUITES:
        suite = get_suite(name)
        config = RunConfig(suite=name, agent=suite.default_agent,
                           protocol=suite.default_protocol or next(iter(suite.protocols)),
                           split="demo", limit=1, workers=0)
        run_dir = tmp_path_factory.mktemp(name) / "run"
        Runner(config, run_dir).run()
        out[name] = run_dir
    return out


@pytest.mark.parametrize("suite", SUITES)
def test_sft_export_loads_with_datasets(runs: dict[str, Path], tmp_path: Path, suite: str) -> None:
    out = tmp_path / "sft"
    result = CliRunner().invoke(cli, ["export", str(runs[suite]), "--format", "sft", "--out", str(out)])
    assert result.exit_code == 0, result.output
    with Store(runs[suite], create=False) as store:
        [episode] = list(store.episodes())
    assert episode.status == "ok"

    dataset = load_from_disk(str(out / "dataset"))
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(dataset) == len(rows) == 1
    row, record = dataset[0], rows[0]
    assert row["suite"] == suite and row["task_id"] == episode.task_id and row["status"] == "ok"
    assert json.loads(row["metrics"]) == pytest.approx(episode.metrics, nan_ok=True)

    messages = row["messages"]
    assert row["loss_mask"] == [int(m["role"] == "assistant") for m in messages]
    assert messages[0]["role"] == "user" and messages[0]["content"].strip()
    spoken = [s for s in episode.steps
              if s.role not in ("control", "protocol") and (s.action_text is not None or s.tool_calls)]
    assistant = [m for m in messages if m["role"] == "assistant"]
    assert len(assistant) == len(spoken) >= 1
    assert [m["content"] for m in assistant] == [s.action_text or "" for s in spoken]
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in {c["id"] for a in record["messages"] for c in a["tool_calls"]}
    for image in (p for m in messages for p in m["images"]):
        assert not Path(image).is_absolute() and (out / image).is_file()
    stored_images = sum(len(s.image_paths) for s in episode.steps)
    assert sum(len(m["images"]) for m in messages) >= stored_images
    assert [m["content"] for m in record["messages"]] == [m["content"] for m in messages]


def test_export_is_deterministic_and_never_overwrites(runs: dict[str, Path], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    first = export_sft(runs["scenerevis"], tmp_path / "a")
    second = export_sft(runs["scenerevis"], tmp_path / "b")
    assert first.images == second.images >= 1
    assert first.jsonl.read_bytes() == second.jsonl.read_bytes()
    assert main(["export", str(runs["example"]), "--format", "sft", "--out", str(tmp_path / "a")]) == 2
    assert "error:" in capsys.readouterr().err and first.jsonl.read_bytes() == second.jsonl.read_bytes()


def test_a_tool_loop_keeps_tool_messages(runs: dict[str, Path], tmp_path: Path) -> None:
    export_sft(runs["bimedit"], tmp_path / "out")
    [record] = [json.loads(line) for line in (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]
    calls = [c for m in record["messages"] if m["role"] == "assistant" for c in m["tool_calls"]]
    assert calls and calls[0]["function"]["name"] == "execute_ifc_code"
    assert json.loads(calls[0]["function"]["arguments"])["code"]
    answers = [m for m in record["messages"] if m["role"] == "tool"]
    assert [a["tool_call_id"] for a in answers] == [c["id"] for c in calls]
