"""Every suite as an Inspect AI task, run with Inspect's mock model offline, scored by our verifiers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("inspect_ai", reason="the inspect extra (inspect-ai) is not installed")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import EvalLog, read_eval_log  # noqa: E402
from inspect_ai.model import ChatMessageTool, ModelOutput, get_model  # noqa: E402

from buildbench.harness import get_suite  # noqa: E402
from buildbench.harness.errors import ConfigError  # noqa: E402
from buildbench.inspect_tasks import TASKS  # noqa: E402
from buildbench.suites.example.agents import tower_design  # noqa: E402
from buildbench.suites.scenerevis.agents.planner import make_room  # noqa: E402
from buildbench.suites.scenerevis.agents.scripted import create_reply  # noqa: E402

# Metrics each suite's verifier must have put in the log.
EXPECTED = {"example": "passed", "dreamhouse": "structural_pass", "buildarena": "passed", "bimedit": "solved",
            "legoeval": "partial_holds", "scenerevis": "collision_rate"}


def _logs(folder: Path) -> dict[str, EvalLog]:
    return {log.eval.task.split("/")[-1]: log for log in map(read_eval_log, map(str, folder.glob("*.eval")))}


def _sample_scores(log: EvalLog) -> dict[str, float]:
    """Every metric of the log's one sample; the score's value is the suite's headline metric."""
    assert log.samples and len(log.samples) == 1
    score = log.samples[0].scores["verify"]  # type: ignore[index]
    metrics: dict[str, float] = score.metadata["metrics"]  # type: ignore[index]
    headline = get_suite(log.eval.task.split("/")[-1]).headline[0]
    assert score.metadata["headline"] == headline and score.value == metrics[headline]  # type: ignore[index]
    assert score.explanation and score.explanation.startswith(("failed: ", f"{headline} = "))
    return metrics


def test_inspect_eval_cli_runs_every_suite_offline(tiktoken_cache: str, tmp_path: Path) -> None:
    """``inspect eval buildbench/<suite> --model mockllm/model --limit 1`` with tiktoken's cache empty
    and no network: the mock answers the same text every turn, so every suite scores a failed build;
    SceneReVis has no room to score (the mock never creates one), which is the agent's failure: a
    failing score with that reason, not an error. Each log's one score is the suite's headline."""
    names = list(EXPECTED)
    cmd = [str(Path(sys.executable).with_name("inspect")), "eval", *(f"buildbench/{n}" for n in names),
           "--model", "mockllm/model", "--limit", "1", "-T", "split=demo", "-T", "max_turns=2",
           "--log-dir", str(tmp_path / "logs"), "--display", "none"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    logs = _logs(tmp_path / "logs")
    assert sorted(logs) == sorted(names), proc.stderr[-2000:]
    for name in names:
        log = logs[name]
        assert log.status == "success", (name, log.error)
        if name == "scenerevis":
            assert log.samples and "no final scene" in (log.samples[0].scores["verify"].explanation or "")
            assert _sample_scores(log)["valid_placement"] == 0.0
            continue
        scores = _sample_scores(log)
        assert EXPECTED[name] in scores and scores[EXPECTED[name]] == 0.0
        assert log.results is not None and [s.name for s in log.results.scores] == ["verify"]
        assert log.results.scores[0].metrics["mean"].value == 0.0
        assert log.samples[0].metadata["task"]["suite"] == name  # type: ignore[index]


def _run(task_name: str, outputs: list[ModelOutput], tmp_path: Path, **params: object) -> EvalLog:
    model = get_model("mockllm/model", custom_outputs=outputs)
    [log] = inspect_eval(TASKS[task_name](split="demo", **params), model=model, limit=1,
                         log_dir=str(tmp_path / "logs"), display="none")
    return log


def test_a_tool_call_that_solves_the_example_scores_one(tiktoken_cache: str, tmp_path: Path) -> None:
    task = get_suite("example").load_tasks("demo", 0)[0]
    call = ModelOutput.for_tool_call("mockllm/model", "submit_blocks", {"blocks": tower_design(task)})
    log = _run("example", [call], tmp_path)
    assert log.status == "success"
    scores = _sample_scores(log)
    assert scores["passed"] == 1.0 and scores["attempts"] == 1.0
    tool_messages = [m for m in log.samples[0].messages if isinstance(m, ChatMessageTool)]  # type: ignore[index]
    assert len(tool_messages) == 1 and "PASS" in tool_messages[0].text.upper()
    assert log.results is not None and log.results.scores[0].metrics["mean"].value == 1.0  # passed
    assert log.samples[0].scores["verify"].explanation.startswith("passed = 1, height_ratio = 1")  # type: ignore[index]


def test_scenerevis_scores_a_room_the_model_created(tiktoken_cache: str, tmp_path: Path) -> None:
    room = create_reply(make_room("bedroom", np.random.default_rng(0)))
    replies = [ModelOutput.from_content("mockllm/model", text) for text in (room, "I am done.")]
    log = _run("scenerevis", replies, tmp_path, max_turns=2)
    assert log.status == "success", log.error
    assert EXPECTED["scenerevis"] in _sample_scores(log)


def test_task_parameters_are_checked() -> None:
    with pytest.raises(ConfigError, match="no split 'huge'"):
        TASKS["example"](split="huge")
    with pytest.raises(ConfigError, match="no task"):
        TASKS["example"](split="demo", tasks="tower_9999_0000")
    with pytest.raises(ConfigError, match="max_turnz"):
        TASKS["example"](split="demo", options={"max_turnz": 1})
    picked = TASKS["example"](split="demo", tasks="tower_0000_0003,tower_0000_0001")
    assert [s.id for s in picked.dataset] == ["tower_0000_0001", "tower_0000_0003"]
    assert json.loads(json.dumps(picked.dataset[0].metadata))["task"]["id"] == "tower_0000_0001"


def test_a_model_can_name_the_buildarena_product_by_controls(tiktoken_cache: str, tmp_path: Path) -> None:
    """The workflow's approval and choice of product, written by the model as control calls."""
    controls = [{"control": "approve", "args": {"machine_id": "1"}}, {"control": "set_final", "args": {"machine_id": "1"}}]
    replies = [ModelOutput.for_tool_call("mockllm/model", "start", {}),
               *(ModelOutput.from_content("mockllm/model", json.dumps(c)) for c in controls)]
    log = _run("buildarena", replies, tmp_path, max_turns=3, options={"sim_duration_s": 0.2})
    assert log.status == "success", log.error
    scores = _sample_scores(log)
    assert (scores["approved"], scores["parts"], scores["calls"], scores["simulated"]) == (1.0, 1.0, 1.0, 1.0)


def test_an_empty_dreamhouse_house_passes_no_test(tiktoken_cache: str, tmp_path: Path) -> None:
    """Issue 23: a house with no members scored pass_rate 0.7 through this task (tests with nothing
    to check passed); the validator now fails every test of an empty structure."""
    empty = ModelOutput.from_content("mockllm/model", '```json\n{"members": []}\n```')
    log = _run("dreamhouse", [empty, empty], tmp_path, max_turns=1)
    assert log.status == "success", log.error
    scores = _sample_scores(log)
    assert scores["members"] == 0.0 and scores["structural_pass"] == 0.0 and scores["pass_rate"] == 0.0


def test_scenerevis_without_a_scene_is_a_scored_failure_not_an_interruption(tiktoken_cache: str,
                                                                            tmp_path: Path) -> None:
    """Issue 25: ``-T max_turns=3`` on the default split ended "Task interrupted" (ValueError: outcome
    has no final scene); such an episode is the agent's failure, scored with its reason."""
    log = _run("scenerevis", [ModelOutput.from_content("mockllm/model", "I would put a bed here.")] * 3,
               tmp_path, max_turns=3)
    assert log.status == "success", log.error
    score = log.samples[0].scores["verify"]  # type: ignore[index]
    assert score.value == 0.0 and score.metadata["status"] == "failed"  # type: ignore[index]
    assert score.explanation and score.explanation.startswith("failed: ") and "scene" in score.explanation


def test_an_env_fault_errors_its_sample_and_the_eval_goes_on(tiktoken_cache: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault of an env is never a score: that sample errors, the others are played and scored, and
    the log's status says something went wrong."""
    from buildbench.suites.example.env import TowerEnv

    real_step = TowerEnv.step

    def step(self: TowerEnv, action: object) -> object:
        if self.task.id == "tower_0000_0001":
            raise RuntimeError("simulated env fault")
        return real_step(self, action)  # type: ignore[arg-type]

    monkeypatch.setattr(TowerEnv, "step", step)
    model = get_model("mockllm/model")
    [log] = inspect_eval(TASKS["example"](split="demo", max_turns=1), model=model, limit=3,
                         log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "error" and log.samples and len(log.samples) == 3
    errored = [s for s in log.samples if s.error is not None]
    assert [s.id for s in errored] == ["tower_0000_0001"] and "simulated env fault" in errored[0].error.message
    scored = [s for s in log.samples if s.error is None]
    assert len(scored) == 2 and all(s.scores["verify"].value == 0.0 for s in scored)  # type: ignore[index]
