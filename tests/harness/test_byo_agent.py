"""``--agent FILE:factory``: a user's agent factory in a file or module (issue 14)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from buildbench.harness import ConfigError, RunConfig, Runner, get_suite, run_report
from buildbench.harness.user_agent import is_user_agent, resolve_agent

REPO = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, agent: str, **kw: object) -> dict:
    config = RunConfig(suite="example", agent=agent, protocol="refine", split="demo", limit=2, workers=0,
                       **kw)  # type: ignore[arg-type]
    Runner(config, tmp_path / "run").run()
    return run_report(tmp_path / "run")


def test_example_agent_file_runs_and_is_labelled_by_its_target(tmp_path: Path) -> None:
    target = f"{REPO}/examples/example/agent.py:make"
    rep = _run(tmp_path, target)
    assert rep["agent"] == target and rep["status"] == {"ok": 2} and rep["metrics"]["passed"] == 1.0


def test_sync_act_objects_are_adapted_and_get_the_model(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(textwrap.dedent("""
        from buildbench.harness import Action
        from buildbench.llm import ChatRequest, Message

        class Mine:
            plays_script = "seen"
            def __init__(self, model):
                self.model = model
            async def act(self, observation, ctx):
                reply = await self.model.generate(ChatRequest(messages=(Message.user(observation.text),)))
                return Action(text=reply.text, usage=reply.usage.to_dict())

        def make(task, model, options):
            return Mine(model)
    """))
    model = f"python:{REPO}/examples/example/model.py:chat"
    record = tmp_path / "calls.jsonl"
    rep = _run(tmp_path, f"{tmp_path}/mine.py:make", model=model, record=str(record))
    assert rep["status"] == {"ok": 2} and rep["metrics"]["passed"] == 1.0 and rep["usage"]["requests"] == 2
    (tmp_path / "run").rename(tmp_path / "recorded")
    replayed = _run(tmp_path, f"{tmp_path}/mine.py:make", model=model, replay=str(record))
    assert replayed["metrics"] == rep["metrics"]  # the agent's own model calls replay too
    spec = resolve_agent(get_suite("example"), f"{tmp_path}/mine.py:make", has_model=True)
    agent = spec.factory(get_suite("example").load_tasks("demo", 0)[0], None, {})
    assert agent.plays_script == "seen"  # protocols read flags through the adapter


def test_bad_agents(tmp_path: Path) -> None:
    assert is_user_agent("x.py:make") and not is_user_agent("reference")
    nope = Path.cwd().resolve() / "nope.py"  # a run keeps its files absolute (run_paths)
    with pytest.raises(ConfigError, match=re.escape(f"agent factory '{nope}:make': no file {nope}")):
        _run(tmp_path, "nope.py:make")
    (tmp_path / "bad.py").write_text("def make(task, model, options):\n    return 3\n")
    rep = _run(tmp_path, f"{tmp_path}/bad.py:make")
    assert rep["status"] == {"error": 2} and rep["unscored"] == 2
    (tmp_path / "wrong.py").write_text(textwrap.dedent("""
        class A:
            def act(self, observation, ctx):
                return "blocks please"
        def make(task, model, options):
            return A()
    """))
    (tmp_path / "run").rename(tmp_path / "run_bad")
    rep = _run(tmp_path, f"{tmp_path}/wrong.py:make")
    assert rep["status"] == {"error": 2}
