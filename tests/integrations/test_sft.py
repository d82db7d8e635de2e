"""``buildbench export RUN --format sft`` on a tiny stored run of every suite (scripted agents)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from buildbench.cli import main
from buildbench.cli.main import cli
from buildbench.harness import RunConfig, Runner, Store, get_suite
from buildbench.harness.sft import export_sft

load_from_disk = pytest.importorskip("datasets", reason="datasets (the train extra) is not installed").load_from_disk

# The module's stored runs and tokenizer are made once: its tests share a worker.
pytestmark = pytest.mark.xdist_group("sft-runs")

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


def _texts(content: object) -> str:
    if isinstance(content, str):
        return content
    return "".join(p["text"] or "" for p in content)  # type: ignore[attr-defined]


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
    assert dataset.features["metrics"]["passed" if suite == "example" else next(iter(record["metrics"]))].dtype == "float64"
    assert row["metrics"] == pytest.approx(episode.metrics, nan_ok=True) == record["metrics"]

    messages = row["messages"]
    spoken = [s for s in episode.steps
              if s.role not in ("control", "protocol") and (s.action_text is not None or s.tool_calls)]
    assistant = [m for m in messages if m["role"] == "assistant"]
    assert len(assistant) == len(spoken) >= 1
    assert [_texts(m["content"]) for m in assistant] == [s.action_text or "" for s in spoken]
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in {c["id"] for a in record["messages"] for c in a["tool_calls"]}
    image_parts = sum(1 for m in messages if not isinstance(m["content"], str) for p in m["content"] if p["type"] == "image")
    if suite in ("dreamhouse", "scenerevis"):  # views at reset or after steps: embedded, one per image part
        assert image_parts == len(row["images"]) == len(record["images"]) >= 1
        assert row["images"][0].size[0] > 0  # a decoded PIL image
        for image in record["images"]:
            assert not Path(image).is_absolute() and (out / image).is_file()
        assert sorted(p.relative_to(out).as_posix() for p in (out / "images").rglob("*.png")) == sorted(record["images"])
    else:
        assert image_parts == 0 and "images" not in dataset.column_names and not (out / "images").exists()
    assert record["messages"] == messages


@pytest.mark.parametrize("suite", SUITES)
def test_roles_alternate_after_the_suite_system_prompt(runs: dict[str, Path], tmp_path: Path, suite: str) -> None:
    """Issue 25: no system message, and DreamHouse had ``user, user, user`` runs that
    strict-alternation templates refuse."""
    export_sft(runs[suite], tmp_path / "out")
    [record] = [json.loads(line) for line in (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]
    roles = [m["role"] for m in record["messages"]]
    if suite != "buildarena":  # its agent is a team of role threads, each with its own system prompt
        assert roles[0] == "system" and len(_texts(record["messages"][0]["content"])) > 40
        roles = roles[1:]
    assert roles[0] == "user" and roles[-1] == "assistant"
    pattern = "".join({"user": "u", "assistant": "a", "tool": "t"}[r] for r in roles)
    assert re.fullmatch(r"u(a(t+u?|u))*a", pattern), pattern


def _template(name: str) -> str:
    trl = pytest.importorskip("trl", reason="training is an extra: trl is not installed")
    return (Path(trl.__file__).parent / "chat_templates" / f"{name}.jinja").read_text()


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory, make_tiny_lm: Callable[..., Any]) -> tuple[Any, Path]:
    """The tests' own tokenizer (tests/conftest.py) with real chat templates that TRL ships."""
    path = tmp_path_factory.mktemp("tiny")
    return make_tiny_lm(path), path


@pytest.mark.parametrize("suite", SUITES)
def test_rows_render_with_real_chat_templates(runs: dict[str, Path], tmp_path: Path, suite: str,
                                              tokenizer: tuple[Any, Path]) -> None:
    """Qwen2.5 (Qwen2.5-VL for suites with images: image parts become vision tokens) renders every
    row, its training variant masks exactly the assistant turns, and Gemma 3, which refuses a
    conversation whose roles do not alternate, renders the suites that use no tools."""
    tok, _ = tokenizer
    export_sft(runs[suite], tmp_path / "out")
    row = load_from_disk(str(tmp_path / "out" / "dataset"))[0]
    vision = "images" in row
    name = "qwen2_5_vl" if vision else "qwen2_5"
    text = tok.apply_chat_template(row["messages"], chat_template=_template(name), tokenize=False)
    assistant = [_texts(m["content"]) for m in row["messages"] if m["role"] == "assistant"]
    assert all(a.strip() in text for a in assistant)
    assert text.count("<|vision_start|>") == (len(row["images"]) if vision else 0)
    encoded = tok.apply_chat_template(row["messages"], chat_template=_template(f"{name}_training"), tokenize=True,
                                      return_dict=True, return_assistant_tokens_mask=True)
    masked = tok.decode([t for t, m in zip(encoded["input_ids"], encoded["assistant_masks"], strict=True) if m])
    assert all(a.strip() in masked for a in assistant)
    assert "<|im_start|>user" not in masked and "<|im_start|>system" not in masked
    if not any(m["role"] == "tool" for m in row["messages"]):
        gemma = tok.apply_chat_template(row["messages"], chat_template=_template("gemma3"), tokenize=False)
        assert gemma.count("<start_of_turn>model") == len(assistant)


@pytest.mark.slow
def test_one_trl_sft_step_on_each_form(runs: dict[str, Path], tmp_path: Path, tokenizer: tuple[Any, Path],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """TRL's SFTTrainer trains the tiny local model one step on the conversations with
    ``assistant_only_loss`` and one on the prompt-completion turns."""
    trl = pytest.importorskip("trl", reason="training is an extra: trl is not installed")
    tok, path = tokenizer
    tok.chat_template = _template("qwen2_5")
    export_sft(runs["bimedit"], tmp_path / "out")
    for folder, assistant_only in (("dataset", True), ("dataset_turns", False)):
        data = load_from_disk(str(tmp_path / "out" / folder))
        args = trl.SFTConfig(output_dir=str(tmp_path / folder), max_steps=1, per_device_train_batch_size=1,
                             learning_rate=1e-3, report_to="none", use_cpu=True, save_strategy="no", bf16=False,
                             assistant_only_loss=assistant_only, max_length=4096, seed=0, logging_steps=1)
        trainer = trl.SFTTrainer(model=str(path), args=args, train_dataset=data, processing_class=tok)
        assert trainer.train().global_step == 1
        [logged] = [h for h in trainer.state.log_history if "loss" in h]
        assert logged["loss"] > 0


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


def test_protocol_and_judge_records_are_never_assistant_turns() -> None:
    """A judge's reply (SceneReVis's eval judge logs role ``judge``) must not become training
    data: records of the protocol's own calls export as the env's side only."""
    from buildbench.harness.episode import Step
    from buildbench.harness.sft import _step_messages

    for role in ("control", "protocol", "judge"):
        step = Step(index=3, role=role, action_text='{"rationality": 1}', observation_text="judged")
        assert [m["role"] for m in _step_messages(step, [])] == ["user"], role
    agent = Step(index=4, role="agent", action_text="<create_scene>", observation_text="ok")
    assert [m["role"] for m in _step_messages(agent, [])] == ["assistant", "user"]
