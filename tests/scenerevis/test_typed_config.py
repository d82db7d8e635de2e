"""SceneReVis's typed configuration: one options class parsed once (the same options, defaults
and bounds as the suite declared before), impossible runs refused before a run folder exists,
controls that are typed env methods, and an outcome that is the suite's record end to end."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from buildbench.cli import main
from buildbench.harness import ConfigError, EpisodeContext, Store, get_suite
from buildbench.harness.runner import stored_outcome
from buildbench.suites.scenerevis import agents
from buildbench.suites.scenerevis.env import SceneReVisEnv, make_env
from buildbench.suites.scenerevis.options import SceneReVisOptions
from buildbench.suites.scenerevis.outcome import SceneReVisOutcome
from buildbench.suites.scenerevis.protocols import diagnose_act
from buildbench.suites.scenerevis.score import score
from buildbench.suites.scenerevis.tasks import load_tasks

#: The suite's own options as it declared them before the options class:
#: (name, kind, default, minimum, maximum, choices, unset).
DECLARED = [
    ("address", "str", "id", None, None, ("id", "jid"), ""),
    ("max_turns", "int", 10, 2, 100, (), ""),
    ("render", "bool", True, None, None, (), ""),
    ("feedback", "bool", True, None, None, (), ""),
    ("retrieve", "bool", True, None, None, (), ""),
    ("retrieved_size", "bool", False, None, None, (), ""),
    ("geometry", "str", "box", None, None, ("box", "procedural", "mesh"), ""),
    ("optimize", "bool", False, None, None, (), ""),
    ("judge", "str", "rule", None, None, (), ""),
    ("eval_judge", "str", "rule", None, None, (), ""),
    ("eval_judge_record", "str", None, None, None, (), "no file"),
    ("vlm_feedback", "str", "none", None, None, (), ""),
    ("vlm_feedback_record", "str", None, None, None, (), "no file"),
    ("max_model_len", "int", 40960, 1024, 10_000_000, (), ""),
    ("prompts", "str", None, None, None, (), ""),
    ("degrade", "float", 0.5, 0.0, 1.0, (), ""),
]


def test_the_options_class_declares_the_options_of_before() -> None:
    suite = get_suite("scenerevis")
    assert suite.options is SceneReVisOptions and suite.options_model() is SceneReVisOptions
    listed = [(s.name, s.kind, s.default, s.minimum, s.maximum, s.choices, s.unset) for s in suite.option_specs()]
    assert listed == DECLARED
    options = suite.parse_options({"max_turns": "3", "address": "jid", "eval_judge": " "})
    assert (options.max_turns, options.address, options.eval_judge) == (3, "jid", "rule")  # blank: the default
    assert options.given() == {"max_turns": 3, "address": "jid", "eval_judge": "rule"}


@pytest.mark.parametrize("raw, needle", [
    ({"max_turns": "1"}, "option max_turns='1': must be >= 2"),
    ({"geometry": "voxels"}, "option geometry='voxels': expected one of box, procedural, mesh"),
    ({"vlm_feedback": "rule"}, "option vlm_feedback: 'rule' is not a model"),
    ({"eval_judge": "gpt5"}, "option eval_judge: model spec 'gpt5': expected 'provider:model'"),
])
def test_a_bad_value_is_one_config_error_line(raw: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError) as caught:
        get_suite("scenerevis").parse_options(raw)
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def _refused(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    run_dir = tmp_path / "run"
    rc = main(["run", "scenerevis", *args, "--limit", "1", "-q", "--run-dir", str(run_dir)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: "), err
    assert not run_dir.exists()
    return err[0]


@pytest.mark.parametrize("agent", ["oracle", "degraded"])
def test_a_chain_replaying_agent_on_a_split_without_chains_is_a_usage_error(
        agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for split in ("demo", "default"):  # the default split is the paper's prompts, without chains
        line = _refused(["--agent", agent, "--split", split], tmp_path, capsys)
        assert f"agent {agent!r} replays the recorded chain" in line and "--split chains" in line


def test_a_chain_replaying_agent_may_run_a_task_file() -> None:
    from buildbench.harness.suite import RunChoice

    suite = get_suite("scenerevis")
    assert suite.check_run is not None
    suite.check_run(RunChoice("oracle", "diagnose-act", "default", suite.parse_options({}), tasks="chains.jsonl"))


def test_bad_options_are_refused_through_buildbench_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    assert "'rule' is not a model" in _refused(["--split", "demo", "-o", "vlm_feedback=rule"], tmp_path, capsys)
    for var in ("BUILDBENCH_3DFUTURE_DIR", "BUILDBENCH_OBJAVERSE_DIR"):
        monkeypatch.delenv(var, raising=False)
    assert "geometry=mesh needs an asset folder" in _refused(["--split", "demo", "-o", "geometry=mesh"], tmp_path,
                                                             capsys)


def test_the_controls_are_typed_env_methods_listed_by_name_with_their_docs() -> None:
    controls = SceneReVisEnv().controls
    assert set(controls) == {"finish", "final_view", "record_evaluation", "layout_feedback"}
    assert all(control.doc for control in controls.values())
    assert controls["final_view"].cpu_bound and not controls["finish"].cpu_bound
    assert controls["layout_feedback"].doc == "keep a layout critique's record; the last observation with it"


def _played(options: SceneReVisOptions) -> tuple[SceneReVisEnv, EpisodeContext]:
    task = next(t for t in load_tasks("demo", 0) if t.metadata["room"] == "bedroom")
    env, ctx = make_env(task, options), EpisodeContext(task=task, seed=0, options=options)
    asyncio.run(diagnose_act(task, options).run(env, agents.diagnose(task, None, options), ctx))
    return env, ctx


def test_the_protocol_logs_its_controls_as_before() -> None:
    env, ctx = _played(SceneReVisOptions(render=False, max_turns=4))
    controls = [(s.role, json.loads(s.action_text or "{}")) for s in ctx.steps if "control" in s.info]
    assert controls == [
        ("protocol", {"control": "finish", "args": {}}),
        ("protocol", {"control": "record_evaluation",
                      "args": {"record": {"judge": "rule", "status": "scored from the scene"}}}),
    ]
    assert env.outcome().eval_judge == {"judge": "rule", "status": "scored from the scene"}


def test_the_outcome_is_the_suites_record_end_to_end() -> None:
    suite = get_suite("scenerevis")
    env, ctx = _played(SceneReVisOptions(render=False, max_turns=4))
    outcome = env.outcome()
    assert isinstance(outcome, SceneReVisOutcome) and outcome.latency_s is not None and outcome.turns == 4
    stored = json.loads(json.dumps(stored_outcome(outcome)))  # what the store keeps
    read = suite.read_outcome(stored)
    assert read == outcome
    # NaN (n/a) metrics compare equal as JSON text
    assert json.dumps(suite.score(ctx.task, read), sort_keys=True) == json.dumps(score(ctx.task, outcome), sort_keys=True)


def test_a_run_stores_the_outcome_record_and_scores_what_it_read_back(tmp_path: Path) -> None:
    suite = get_suite("scenerevis")
    assert main(["run", "scenerevis", "--split", "demo", "--limit", "1", "-q", "--workers", "0",
                 "-o", "render=false", "-o", "max_turns=3", "--run-dir", str(tmp_path / "run")]) == 0
    with Store(tmp_path / "run") as store:
        (episode,) = list(store.episodes())
    task = suite.load_tasks("demo", 0)[0]
    outcome = suite.read_outcome(episode.outcome)
    assert isinstance(outcome, SceneReVisOutcome) and outcome.turns == 3 and outcome.eval_judge is not None
    assert stored_outcome(outcome) == episode.outcome  # the stored JSON is the record's, nothing lost
    assert json.dumps(episode.metrics, sort_keys=True) == json.dumps(score(task, outcome), sort_keys=True)
