"""Episodes played in a process of their own: env code that crashes natively cannot end the run.

Env code calls native libraries (FCL, MuJoCo, IfcOpenShell, a GL context); a segfault or an abort
there ends the process it runs in. Worker-pool episodes already run in worker processes; every
other episode (model-backed ones, and all of them with ``--workers 0``) is played by
`play_apart` in a child process (`call_isolated`, from the forkserver that has the suite loaded),
the whole of ``execute_episode``: env, protocol and agent, so they run exactly as they would here.

What must stay in the harness crosses a pipe (`Channel`): each model call (the run's one
``ChatModel``, with its client, retries, record/replay and concurrency, answers it here) and the
scoring of the outcome (the runner's bounded, isolated scorer). An episode whose process dies is
stored as an ``error`` of kind ``crash`` naming the signal (`crashed_episode`); the run goes on,
and ``--resume`` plays it again (`Store.finished` leaves crashed episodes out).

Cost: one fork from the forkserver per episode and one pipe round trip per model call (see
``benchmarks/bench_apart.py``); env steps run in the child with no crossing at all.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Executor
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .episode import Episode
from .isolated import Channel, Isolated, IsolationLimits, call_isolated
from .suite import get_suite, suite_target
from .task import Task, episode_seed
from .user_agent import resolve_agent

if TYPE_CHECKING:
    from buildbench.llm import ChatModel, ChatRequest, ChatResponse

    from .runner import RunConfig, ScoreFn

    #: ``execute_episode``'s signature (passed in, so this module does not import the runner).
    Execute = Callable[[RunConfig, Task, int, Path | None, ChatModel | None, ScoreFn | None],
                       Coroutine[Any, Any, Episode]]

#: Limits of a process that plays one episode. Loose on purpose: an episode may wait hours on a
#: slow endpoint, and the sandboxes it starts keep their own memory budgets (memory_mb None keeps
#: the process in the harness's memory group, where they make theirs as in the harness).
EPISODE_LIMITS = IsolationLimits(wall_s=6 * 3600.0, cpu_s=6 * 3600, memory_mb=None)


@cache
def _model_proxy_type() -> type:
    from buildbench.llm import ChatModel  # here: only episode processes need it

    class ModelProxy(ChatModel):
        """The run's model as the episode's process sees it: each call answered by the harness."""

        def __init__(self, channel: Channel, provider: str, model: str) -> None:
            self.channel = channel
            self.provider = provider
            self.model = model

        async def generate(self, request: ChatRequest) -> ChatResponse:
            response: ChatResponse = await self.channel.ask(("generate", (request,)))
            return response

    return ModelProxy


def _play(channel: Channel, execute: Execute, config: RunConfig, task: Task, sample: int,
          artifact_root: str | None, model: tuple[str, str] | None) -> dict[str, Any]:
    """In the episode's process: ``execute`` (``execute_episode``) with the harness's model and scorer."""
    proxy = None if model is None else _model_proxy_type()(channel, *model)

    async def score(task: Task, outcome: dict[str, Any]) -> dict[str, float]:
        metrics: dict[str, float] = await channel.ask(("score", (task, outcome)))
        return metrics

    root = None if artifact_root is None else Path(artifact_root)
    return asyncio.run(execute(config, task, sample, root, proxy, score)).to_dict()


async def play_apart(execute: Execute, config: RunConfig, task: Task, sample: int, artifact_root: Path | None,
                     model: ChatModel | None, score: ScoreFn, threads: Executor,
                     stop: threading.Event | None = None) -> Episode:
    """Play one episode in a process of its own (module docstring); never raises for what it does.

    Args:
        execute: ``execute_episode`` (a module-level function: it crosses to the process by name).
        model: The run's model; its calls are made here, on this event loop.
        score: How this harness scores an outcome (the episode's scoring is asked for here).
        threads: Where the wait for the process runs (one thread per episode in flight: the
            default executor is too small for a run's concurrency and is shared with scoring).
        stop: Set when the run fails: the process is killed (`call_isolated`), not left waiting
            for model answers from an event loop that is gone.
    """
    loop = asyncio.get_running_loop()
    handlers: dict[str, Callable[..., Awaitable[Any]]] = {"score": score}
    if model is not None:
        handlers["generate"] = model.generate
    pending: set[concurrent.futures.Future[Any]] = set()
    served = {"generate": 0, "score": 0}

    def serve(request_id: int, payload: Any, reply: Callable[[int, bool, Any], None]) -> None:
        kind, args = payload
        if kind not in handlers:
            reply(request_id, False, RuntimeError(f"the harness does not answer {kind!r} requests"))
            return
        served[kind] += 1
        async def answer() -> Any:
            return await handlers[kind](*args)

        future = asyncio.run_coroutine_threadsafe(answer(), loop)
        pending.add(future)

        def answered(done: concurrent.futures.Future[Any]) -> None:
            pending.discard(done)
            if done.cancelled():
                return
            error = done.exception()
            reply(request_id, error is None, done.result() if error is None else error)

        future.add_done_callback(answered)

    described = None if model is None else (model.provider, model.model)
    args = (execute, config, task, sample, None if artifact_root is None else str(artifact_root), described)
    try:
        # script_free: what an episode plays comes from the suite, the agent (a suite's, or a user's file,
        # imported by its path) and the model's answers, never from the main script's top level; its
        # process does not run that script again unless the call refers to it (a Python-API script's
        # top-level imports then cost once, not once per episode: ~15 CPU ms for benchmarks/run.py)
        done = await loop.run_in_executor(threads, partial(
            call_isolated, _play, args, EPISODE_LIMITS, preload=(suite_target(config.suite).partition(":")[0],),
            serve=serve, stop=stop, script_free=True))
    finally:
        for future in list(pending):  # calls of a process that is gone: nobody reads their answers
            future.cancel()
    if done.status == "ok":
        return Episode.from_dict(done.value)
    episode = crashed_episode(config, task, sample, done, has_model=model is not None)
    episode.metadata["model_calls"] = served["generate"]
    return episode


def crashed_episode(config: RunConfig, task: Task, sample: int, done: Isolated, *, has_model: bool) -> Episode:
    """The ``error`` an episode is when the process playing it ended without an answer."""
    suite = get_suite(config.suite)
    episode = Episode(task_id=task.id, sample=sample, suite=suite.name,
                      agent=resolve_agent(suite, config.agent, has_model=has_model).name,
                      protocol=suite.protocol(config.protocol).name, seed=episode_seed(config.seed, task.id, sample),
                      metadata=dict(task.metadata), status="error", error_kind="crash")
    if done.status == "crash":
        episode.error = f"the process running this episode died: {done.error}; the run went on"
    elif done.status == "error":  # the harness's own code failed there (execute_episode catches the rest)
        episode.error_kind = "exception"
        episode.error = f"the process running this episode failed: {done.error}"
    else:
        episode.error = f"the episode's process stopped: {done.error}"
    return episode
