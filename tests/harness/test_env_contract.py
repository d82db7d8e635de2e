"""The Env contract: typed agent errors from the model client to the store, control calls
through the episode context (logged, off the event loop when CPU-bound), per-instance tools."""

from __future__ import annotations

import asyncio
import threading

import pytest

from buildbench.harness import (
    Action,
    AgentError,
    Env,
    EpisodeContext,
    Observation,
    ResetResult,
    RunConfig,
    StepResult,
    Store,
    Task,
    execute_episode,
    get_suite,
)
from buildbench.harness.env import control
from buildbench.llm import ApiError, ChatResponse, ScriptedChat, Tool


def _failing_model(kind: str) -> ScriptedChat:
    return ScriptedChat([ChatResponse(text="", error=ApiError(kind, f"the endpoint said no ({kind})", attempts=1))])


@pytest.mark.parametrize(("kind", "status"), [("timeout", "api_error"), ("api_error", "api_error"),
                                              ("budget", "budget"), ("replay_miss", "api_error")])
def test_the_error_kind_travels_from_the_client_to_the_store(tmp_path, kind, status):
    config = RunConfig(suite="example", agent="llm", protocol="one-shot", split="demo", limit=1, workers=0)
    task = get_suite("example").load_tasks("demo", 0)[0]
    episode = asyncio.run(execute_episode(config, task, 0, None, model=_failing_model(kind)))
    assert episode.status == status
    assert episode.error_kind == kind and episode.error == f"{kind}: the endpoint said no ({kind})"
    failed = episode.steps[-1]
    assert failed.terminated and failed.info["agent_error"] == {"kind": kind, "message": f"the endpoint said no ({kind})"}
    with Store(tmp_path / "run") as store:
        store.add_episode(episode)
        (kept,) = store.episodes()
    assert kept.error_kind == kind and kept.status == status


def test_agent_errors_are_typed_and_checked():
    error = AgentError.from_api(ApiError("timeout", "read timed out after 2 s"))
    assert (error.kind, error.message, str(error)) == ("timeout", "read timed out after 2 s",
                                                       "timeout: read timed out after 2 s")
    with pytest.raises(ValueError, match="AgentError.kind: expected one of"):
        AgentError("oops", "x")  # type: ignore[arg-type]


class _CounterEnv(Env):
    """A tiny env with a cheap control and a CPU-bound one."""

    def __init__(self) -> None:
        self.count = 0
        self.threads: list[int] = []
        self.tools = [Tool("bump", "add one", {"type": "object", "properties": {}})]

    @control(doc="add n to the count")
    def add(self, n: int) -> Observation:
        self.count += n
        return Observation(text=f"count {self.count}", state={"count": self.count})

    @control(cpu_bound=True)
    def heavy(self, scorer: object = None) -> dict[str, int]:
        """Read the count off the event loop."""
        self.threads.append(threading.get_ident())
        return {"count": self.count}

    def reset(self, task: Task, *, seed: int | None = None) -> ResetResult:
        self.count = 0
        return ResetResult(Observation(text="start"), {})

    def step(self, action: Action) -> StepResult:
        self.count += 1
        return StepResult(Observation(text=str(self.count)), 0.0, False, False, {})

    def outcome(self) -> dict[str, int]:
        return {"count": self.count}


def _score_fn(task: Task, structure: object, condition: str, renderer: str) -> None:
    return None


def test_control_calls_are_logged_and_cpu_bound_ones_run_off_the_loop():
    env = _CounterEnv()
    ctx = EpisodeContext(task=Task("t", "x"), seed=0)

    async def play() -> int:
        await ctx.reset(env)
        await ctx.control(env.add, 3)
        result = await ctx.control_as("simulator", env.heavy, scorer=_score_fn)
        assert result == {"count": 3}
        return threading.get_ident()

    loop_thread = asyncio.run(play())
    assert env.threads and env.threads[0] != loop_thread
    add, heavy = ctx.steps
    assert (add.role, add.action_text, add.observation_text) == (
        "protocol", '{"control": "add", "args": {"n": 3}}', "count 3")
    assert add.info == {"control": "add"} and heavy.role == "simulator"
    # A function argument is logged by name, never by a repr with a memory address.
    assert heavy.action_text is not None and heavy.action_text.endswith('._score_fn"}}')
    assert "0x" not in heavy.action_text and heavy.info == {"control": "heavy", "count": 3}


def test_a_text_agent_calls_a_control_by_name_and_an_unknown_name_is_feedback():
    from buildbench.integrations.text import run_control

    env = _CounterEnv()
    unknown = run_control(env, "begin", {})
    assert unknown.observation.text == "Unknown control 'begin'; controls: add, heavy. Nothing changed."
    assert run_control(env, "add", {"n": 2}).observation.text == "count 2" and env.count == 2


def test_controls_are_listed_by_name_with_their_doc_and_only_marked_methods_are_controls():
    env = _CounterEnv()
    assert {name: (c.cpu_bound, c.doc) for name, c in env.controls.items()} == {
        "add": (False, "add n to the count"), "heavy": (True, "Read the count off the event loop.")}
    assert env.controls["add"].fn.__self__ is env  # bound to this env
    ctx = EpisodeContext(task=Task("t", "x"), seed=0)
    with pytest.raises(TypeError, match="not an env control"):
        asyncio.run(ctx.control(env.step, Action()))
    asyncio.run(ctx.control(env.add, n=2))
    assert env.count == 2 and ctx.steps[0].action_text == '{"control": "add", "args": {"n": 2}}'


def test_tools_belong_to_each_env_instance():
    a, b = _CounterEnv(), _CounterEnv()
    a.tools.append(Tool("x", "y", {"type": "object", "properties": {}}))  # a copy: the env's list is unchanged
    assert [t.name for t in a.tools] == ["bump"] == [t.name for t in b.tools]
    b.tools = []
    assert [t.name for t in a.tools] == ["bump"] and b.tools == []
