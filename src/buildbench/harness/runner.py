"""``Runner``: many episodes, concurrently, resumably, into a ``Store``.

Two kinds of concurrency, because two kinds of waiting dominate:

- ``io`` agents (model-backed) spend their time waiting on HTTP; their episodes run as
  asyncio tasks on one event loop, at most ``concurrency`` at once.
- ``cpu`` agents (scripted designs, references) never wait; their whole episodes run in a
  process pool of ``workers`` processes, so checks and simulations use every core.

Either way only the main process writes to the store, one transaction per finished episode.

Worker processes start from a ``forkserver`` (a GL context or SDK threads do not survive a
plain fork), so a script that calls ``Runner.run`` itself needs the usual
``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import threading
import time
import traceback
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from buildbench.parallel import Backend
from buildbench.sandbox.lifetime import clean_stale_workdirs, die_with_run

from .apart import EPISODE_LIMITS, crashed_episode, play_apart
from .context import EpisodeContext
from .episode import Episode, status_of
from .errors import AgentFailure, BuildbenchError, ConfigError
from .forkserver_preload import forkserver_context
from .isolated import FORKSERVER_LAST, FORKSERVER_PRELOAD, IsolationLimits, call_isolated, kept_ready
from .main_guard import check_main_guard
from .options import DEFAULT_CONCURRENCY, DEFAULT_WORKERS
from .outcome import OutcomeRecord
from .progress import Progress
from .prompts import prompt_folder
from .run_options import with_run_options
from .run_paths import absolute_fields, option_paths
from .store import Store
from .suite import RunChoice, Suite, get_suite, mean_metrics
from .task import Task, episode_seed, file_stem
from .task_files import load_task_files
from .user_agent import resolve_agent

if TYPE_CHECKING:
    from buildbench.llm import ChatModel

# Fields that define what a run computes; resuming with any of them changed would mix
# episodes of two different experiments in one store.
_IDENTITY = ("suite", "agent", "protocol", "model", "split", "seed", "samples", "options", "tasks")


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run.

    Attributes:
        suite / agent / protocol: Registered names.
        model: Model spec for model-backed agents (``openai:gpt-4o``, ``scripted``…).
        split: Task split of the suite.
        limit: Run only the first ``limit`` tasks of the split.
        samples: Episodes per task (independent samples with different seeds).
        seed: Run seed; each episode's seed derives from it, the task id and the sample.
        concurrency: Model-backed episodes in flight at once.
        workers: Processes for CPU-bound episodes (0: no pool; each episode still plays in a
            process of its own, :mod:`.apart`).
        options: Suite/agent/protocol options (``-o key=value`` on the CLI).
        record / replay: JSONL model cache paths (record every call / answer from the file).
        tasks: A task file or folder (``--tasks``) run instead of ``split``; see
            `buildbench.harness.task_files`.
        backend: ``process`` (this machine: event loop + process pool) or ``ray`` (episodes as
            Ray tasks; see `buildbench.harness.ray_backend`).
        address: Ray cluster address (``auto``, ``ray://HOST:PORT``); None starts a local instance.
    """

    suite: str
    agent: str
    protocol: str
    model: str | None = None
    split: str = "default"
    limit: int | None = None
    samples: int = 1
    seed: int = 0
    concurrency: int = DEFAULT_CONCURRENCY
    workers: int = DEFAULT_WORKERS
    options: dict[str, Any] = field(default_factory=dict)
    record: str | None = None
    replay: str | None = None
    tasks: str | None = None
    backend: str = "process"
    address: str | None = None

    def __post_init__(self) -> None:
        # Python callers reach here without a run file's or the command line's checks.
        for name in ("suite", "agent", "protocol", "split"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ConfigError(f"{name} must be a non-empty string, got {getattr(self, name)!r}")
        for name in ("model", "record", "replay", "tasks", "address"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), (str, os.PathLike)):
                raise ConfigError(f"{name} must be a string or None, got {getattr(self, name)!r}")
        Backend(self.backend, self.address)  # validates both
        for name, low in (("samples", 1), ("concurrency", 1), ("workers", 0), ("seed", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}")
        if self.limit is not None and (isinstance(self.limit, bool) or not isinstance(self.limit, int)
                                       or self.limit < 1):
            raise ConfigError(f"limit must be a positive integer, got {self.limit!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_yaml(self) -> str:
        """Every field as a run file (``buildbench run --config``) that reads back to this config."""
        import yaml

        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)

    def identity(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _IDENTITY}


@dataclass
class RunResult:
    """What a finished ``run`` reports."""

    run_dir: Path
    total: int
    ran: int
    skipped: int
    summary: dict[str, Any]


def select_tasks(suite: Suite, config: RunConfig) -> list[Task]:
    if config.tasks:
        # a suite may read its own task format (``extra["read_task_file"]``: None when not its format)
        native = suite.extra.get("read_task_file")
        found = native(config.tasks) if native is not None else None
        tasks = found if found is not None else load_task_files(config.tasks, suite.name, suite.validate_task,
                                                                  paths=suite.task_paths)
        return tasks[: config.limit] if config.limit else tasks
    if config.split not in suite.splits:
        raise ConfigError(f"suite {suite.name!r} has no split {config.split!r}; splits: {', '.join(suite.splits)}")
    tasks = suite.load_tasks(config.split, config.seed)
    return tasks[: config.limit] if config.limit else tasks


def _short_repr(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def artifact_dir(root: Path, task_id: str, sample: int) -> Path:
    return root / file_stem(task_id) / f"s{sample}"


ScoreFn = Callable[[Task, dict[str, Any]], Awaitable[dict[str, float]]]


def stored_outcome(outcome: OutcomeRecord | dict[str, Any]) -> dict[str, Any]:
    """``Env.outcome()`` as the store keeps it (JSON)."""
    return outcome.to_dict() if isinstance(outcome, OutcomeRecord) else outcome


def score_outcome(suite_name: str, task: Task, outcome: dict[str, Any]) -> dict[str, float]:
    """Score in whatever process this runs in (module-level so a process pool can call it)."""
    suite = get_suite(suite_name)
    return suite.score(task, suite.read_outcome(outcome))


#: Limits of scoring one episode's outcome (agent output) in a process of its own. A suite's caps,
#: checked before scoring (IFC entities and points, members, blocks, objects), keep outputs past
#: them from costing anything; these bound the rest.
SCORE_LIMITS = IsolationLimits(wall_s=900.0, cpu_s=600, memory_mb=8192)


#: Most scoring processes a run keeps started ahead of its scorings (`isolated.kept_ready`).
READY_SCORERS = 32


class ScorerCrash(RuntimeError):
    """The process scoring an episode died by itself (a native crash): an error, never a score."""


def score_isolated(suite_name: str, task: Task, outcome: dict[str, Any],
                   stop: threading.Event | None = None) -> dict[str, float]:
    """``score_outcome`` in a child process with `SCORE_LIMITS` (`buildbench.harness.isolated`);
    ``stop`` (a run that failed) kills it.

    Raises:
        AgentFailure: The scorer raised it, or scoring the output went past a limit (the output is
            the agent's: its cost is its failure).
        ScorerCrash: The scoring process died (segfault, abort).
        Exception: Whatever else the scorer raised, as itself.
    """
    from .suite import suite_target

    done = call_isolated(score_outcome, (suite_name, task, outcome), SCORE_LIMITS,
                         preload=(suite_target(suite_name).partition(":")[0],), stop=stop, script_free=True)
    if done.status == "ok":
        return dict(done.value)
    if done.status == "error" and done.exception is not None:
        raise done.exception
    if done.status == "limit":
        raise AgentFailure(f"scoring the output went past a limit: {done.error}")
    raise ScorerCrash(str(done.error))


async def execute_episode(
    config: RunConfig, task: Task, sample: int, artifact_root: Path | None, model: ChatModel | None = None,
    score: ScoreFn | None = None,
) -> Episode:
    """Play and score one episode. Agent and env failures become the episode's status.

    ``score`` runs the suite's scorer somewhere else; by default it runs in a process of its own
    with `SCORE_LIMITS` (`score_isolated`).
    """
    suite = get_suite(config.suite)
    agent_spec = resolve_agent(suite, config.agent, has_model=model is not None)
    protocol_spec = suite.protocol(config.protocol)
    seed = episode_seed(config.seed, task.id, sample)
    ctx = EpisodeContext(
        task=task,
        seed=seed,
        sample=sample,
        artifact_dir=None if artifact_root is None else artifact_dir(artifact_root, task.id, sample),
        options=suite.parse_options(config.options),  # the typed object every factory takes
    )
    episode = Episode(task_id=task.id, sample=sample, suite=suite.name, agent=agent_spec.name,
                      protocol=protocol_spec.name, seed=seed, metadata=dict(task.metadata))
    t0 = time.perf_counter()
    env = None
    try:
        with prompt_folder(getattr(ctx.options, "prompts", None)):  # -o prompts=DIR: the user's prompt texts
            env = suite.make_env(task, ctx.options)
            agent = agent_spec.factory(task, model, ctx.options)
            protocol = protocol_spec.factory(task, ctx.options)
            await protocol.run(env, agent, ctx)
        episode.outcome = stored_outcome(env.outcome())
        if ctx.agent_error is not None:
            episode.status = status_of(ctx.agent_error)
            episode.error, episode.error_kind = str(ctx.agent_error), ctx.agent_error.kind
    except AgentFailure as exc:  # the agent's own output: a scored failure, never unscored
        if env is not None:
            try:
                episode.outcome = stored_outcome(env.outcome())
            except Exception:  # what the agent left may itself be what was refused
                episode.outcome = {}
        _agent_failed(episode, suite, task, exc)
    except Exception as exc:  # an episode's failure is data, not a crash of the run
        episode.status, episode.error_kind = "error", "exception"
        episode.error = f"{type(exc).__name__}: {exc}"
        episode.metadata["traceback"] = traceback.format_exc(limit=20)
    finally:
        if env is not None:
            env.close()
    # An episode the model endpoint cut short is still scored the way its paper scores it
    # (BIM-Edit keeps the last commit), but its metrics never enter a mean unless a report
    # asks to count such episodes as failures (see `is_scored`).
    if episode.status not in ("error", "failed"):
        try:
            if score is not None:
                episode.metrics = await score(task, episode.outcome)
            else:
                episode.metrics = await asyncio.to_thread(score_isolated, suite.name, task, episode.outcome)
        except AgentFailure as exc:
            if episode.status == "api_error":
                episode.metadata["scorer_error"] = f"agent output refused: {exc.reason}"
            else:
                _agent_failed(episode, suite, task, exc)
        except Exception as exc:  # a scorer bug is recorded as an error, never as a zero score
            if episode.status == "api_error":
                # What the endpoint left may not be scorable; it stays an API failure.
                episode.metadata["scorer_error"] = f"{type(exc).__name__}: {exc}"
            else:
                episode.status, episode.error_kind = "error", "scorer"
                episode.error = f"scorer failed: {type(exc).__name__}: {exc}"
                episode.metadata["traceback"] = traceback.format_exc(limit=20)
    episode.steps = ctx.steps
    episode.usage = ctx.usage
    episode.duration_s = time.perf_counter() - t0
    if ctx.artifact_dir is not None and ctx.artifact_dir.exists():
        episode.artifacts = {"dir": str(ctx.artifact_dir.relative_to(artifact_root.parent))}  # type: ignore[union-attr]
    return episode


def _agent_failed(episode: Episode, suite: Suite, task: Task, failure: AgentFailure) -> None:
    """Make ``episode`` the scored failure ``failure`` says the agent caused (`AgentFailure`)."""
    stopped = f" (the agent had stopped: {episode.error})" if episode.error else ""  # e.g. its budget spent
    episode.status, episode.error_kind = "failed", "agent_output"
    episode.error = f"agent output refused: {failure.reason}{stopped}"
    episode.metrics = dict(suite.failure_metrics(task)) if suite.failure_metrics is not None else {}


def build_model(config: RunConfig) -> ChatModel:
    """The chat model ``config`` names (in the driver, or in a Ray worker)."""
    from buildbench.llm import LLMConfigError, RecordReplay, make_model, parse_spec

    if config.replay:
        if not config.model:
            raise ConfigError("--replay needs the --model the run was recorded with (it is part of the key)")
        spec = parse_spec(config.model)
        # Replay must work offline and without keys, so no client is built.
        return RecordReplay(config.replay, mode="replay", provider=spec.provider, model=spec.model)
    try:
        settings = get_suite(config.suite).parse_options(config.options).client_settings()
        model = make_model(config.model or "", **settings)
    except LLMConfigError as exc:
        raise ConfigError(str(exc)) from exc
    if config.record:
        return RecordReplay(config.record, model, mode="record", provider=parse_spec(config.model or "").provider)
    return model


def play_on_worker(config: RunConfig, task: Task, sample: int, artifact_root: Path,
                   model: ChatModel | None) -> dict[str, Any]:
    """One whole episode in a Ray worker (`buildbench.harness.ray_backend`), building the model
    there when the run did not ship one; its record goes back to the driver."""
    if model is None and get_suite(config.suite).agent(config.agent).needs_model:
        model = build_model(config)
    return asyncio.run(execute_episode(config, task, sample, artifact_root, model)).to_dict()


def _episode_in_worker(config: RunConfig, task: Task, sample: int, artifact_root: str) -> dict[str, Any]:
    episode = asyncio.run(execute_episode(config, task, sample, Path(artifact_root)))
    return episode.to_dict()


def _episode_alone(config: RunConfig, task: Task, sample: int, artifact_root: str,
                   stop: threading.Event) -> dict[str, Any]:
    """``_episode_in_worker`` in a process of its own (`EPISODE_LIMITS`); an episode whose process
    dies (a native crash of env or scorer code) is stored as an error saying so."""
    from .suite import suite_target

    done = call_isolated(_episode_in_worker, (config, task, sample, artifact_root), EPISODE_LIMITS,
                         preload=(suite_target(config.suite).partition(":")[0],), stop=stop)
    if done.status == "ok":
        return dict(done.value)
    return crashed_episode(config, task, sample, done, has_model=False).to_dict()


def _pool(workers: int, suite_name: str) -> ProcessPoolExecutor:
    # forkserver: a worker forked from a parent that holds a GL context, an open sandbox or
    # SDK threads inherits broken copies of them (Mesa hangs on the first draw). The server
    # preloads the harness and the suite once, so each worker starts by a cheap fork.
    from .suite import suite_target

    # the isolated calls' modules too: a scoring after the run then forks from the same server
    context = forkserver_context([*FORKSERVER_PRELOAD, suite_target(suite_name).partition(":")[0],
                                  *FORKSERVER_LAST])
    # Workers (and through them the forkserver and the resource tracker) end with this process,
    # even when it is killed with SIGKILL: nothing of a run outlives it.
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=die_with_run,
                               initargs=(os.getpid(),))
    # Start the workers now, while the first model calls are in flight, not on first use.
    for _ in range(workers):
        pool.submit(_warm)
    return pool


def _warm() -> None:
    """No-op task that makes a pool start its worker processes."""


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """Kill ``pool``'s worker processes (and with them the scorers they started: die_with_parent).
    Python 3.11 has no public way (``terminate_workers`` is 3.14's); shutdown alone would wait for
    every episode in flight to end."""
    processes: dict[int, Any] = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        process.kill()


async def _all_or_stop(episodes: Sequence[Coroutine[Any, Any, None]], stop: threading.Event,
                       on_stop: Callable[[], None] = lambda: None) -> None:
    """Await every episode; when one fails (its store write on a full disk) or the run is
    interrupted, the rest are cancelled and ``stop`` set, so that the processes playing or scoring
    them are killed now: left alone they would wait for answers from an event loop that is gone,
    holding the exit until their wall limits (hours). Unstored episodes play again on --resume."""
    tasks = [asyncio.ensure_future(episode) for episode in episodes]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        stop.set()
        for task in tasks:
            task.cancel()
        on_stop()
        if tasks:
            await asyncio.wait(tasks)
        raise


def versions() -> dict[str, str]:
    """Versions recorded in every run manifest."""
    from importlib.metadata import PackageNotFoundError, version

    from buildbench.numeric_platform import numeric_platform

    out = {"python": platform.python_version(), "platform": platform.platform(), "cpu": numeric_platform()}
    for pkg in ("buildbench", "numpy", "scipy", "mujoco", "ifcopenshell", "moderngl", "openai", "anthropic"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            continue
    return out


def _remove_new_store(run_dir: Path, new_folder: bool) -> None:
    """Remove the files a new run had begun in ``run_dir`` (and the folder, made for it)."""
    for name in (Store.FILENAME, f"{Store.FILENAME}-wal", f"{Store.FILENAME}-shm", "run.yaml"):
        with contextlib.suppress(OSError):
            (run_dir / name).unlink(missing_ok=True)
    if new_folder:
        with contextlib.suppress(OSError):
            run_dir.rmdir()  # only when empty


class Runner:
    """Runs ``config`` into ``run_dir``.

    Args:
        config: The run definition.
        run_dir: Folder of the run's store and artifacts.
        resume: Continue a run already in ``run_dir``: its finished episodes are skipped.
            Without it, a non-empty ``run_dir`` is an error (nothing is overwritten).
        progress: Show a progress bar on the terminal.
        model: A ready chat model (tests inject one); otherwise built from ``config.model``.
    """

    def __init__(self, config: RunConfig, run_dir: str | Path, *, resume: bool = False,
                 progress: bool = False, model: ChatModel | None = None) -> None:
        self.config = config
        self.run_dir = Path(run_dir)
        self.resume = resume
        self.progress = progress
        self._model = model
        self._paths: dict[str, str] = {}  # option name -> how it names a file (run_paths)

    def run(self) -> RunResult:
        return asyncio.run(self.run_async())

    async def run_async(self) -> RunResult:
        if self.config.backend == "process":
            check_main_guard()  # episodes' processes run the main script again (Ray's do not)
        # Work folders of an earlier run that was killed before it could remove them.
        clean_stale_workdirs()
        suite = get_suite(self.config.suite)
        # Python callers' relative paths are the cwd's; the run stores them absolute (run_paths).
        self._paths = option_paths(suite.option_specs())
        self.config = RunConfig(**absolute_fields(self.config.to_dict(), Path.cwd(), self._paths)[0])
        agent_spec = resolve_agent(suite, self.config.agent,
                                   has_model=bool(self.config.model or self._model or self.config.replay))
        suite.protocol(self.config.protocol)
        if agent_spec.needs_model and not (self.config.model or self._model or self.config.replay):
            raise ConfigError(f"agent {agent_spec.name!r} needs a model: pass --model (e.g. openai:gpt-4o)")
        options = self.checked_options(suite, agent_spec.name)
        if self.config.backend == "ray":
            from .ray_backend import prepare_ray

            prepare_ray(self.config)
        tasks = select_tasks(suite, self.config)
        if tasks:
            self.check_protocol(suite, tasks[0], options)
        # Built here on every backend, so a bad model spec (or a missing key) fails once, before
        # any episode and before the run folder exists: fixing it needs no --resume.
        model = self._build_model() if agent_spec.needs_model else None
        store = self._open_store(len(tasks))
        try:
            done = store.finished()
            todo = [(t, s) for t in tasks for s in range(self.config.samples) if (t.id, s) not in done]
            skipped = len(tasks) * self.config.samples - len(todo)
            with Progress(self.progress, len(todo), f"{suite.name}/{agent_spec.name}") as bar:
                if self.config.backend == "ray":
                    from .ray_backend import run_on_ray

                    await run_on_ray(self.config, todo, store, bar, play=play_on_worker,
                                     io_bound=agent_spec.kind != "cpu", model=self._model)
                elif agent_spec.kind == "cpu" and self.config.workers > 0:
                    await self._run_in_pool(todo, store, bar)
                else:
                    await self._run_on_loop(todo, store, bar, model)
            episodes = with_run_options(store.episodes(), self.config.to_dict())
            summary = (suite.summarize or mean_metrics)(episodes)
            store.write_summary(summary)
            return RunResult(self.run_dir, len(tasks) * self.config.samples, len(todo), skipped, summary)
        finally:
            store.close()

    def _check_prompt_folder(self, suite: Suite) -> None:
        """Refuse ``-o prompts=DIR`` up front when it replaces nothing; store it resolved."""
        folder = self.config.options.get("prompts")
        if folder is None:
            return
        if suite.prompts is None:
            raise ConfigError(f"suite {suite.name!r} has no replaceable prompt files (option prompts)")
        resolved = str(suite.prompts.check_folder(folder))
        self.config = replace(self.config, options={**self.config.options, "prompts": resolved})

    def checked_options(self, suite: Suite, agent: str) -> Any:
        """The run's options parsed once into the suite's class, before the run folder exists (a bad
        option is one line and leaves no folder); the config keeps the given values, and the
        suite's ``check_run`` and the prompt folder are checked with them."""
        options = suite.parse_options(self.config.options)
        self.config = replace(self.config, options=options.given())
        if suite.check_run is not None:  # combinations of agent, protocol, split and options
            suite.check_run(RunChoice(agent, self.config.protocol, self.config.split, options, tasks=self.config.tasks))
        self._check_prompt_folder(suite)
        return options

    def check_protocol(self, suite: Suite, task: Task, options: Any) -> None:
        """Build the protocol once: bad protocol options would otherwise fail every episode."""
        try:
            suite.protocol(self.config.protocol).factory(task, options)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"protocol {self.config.protocol!r}: invalid options: {exc}") from exc

    def _open_store(self, n_tasks: int) -> Store:
        path = self.run_dir / Store.FILENAME
        existing = path.exists()
        if existing and path.is_file() and path.stat().st_size == 0:
            # SQLite would take an empty file for a new database: the run would start over unseen.
            raise ConfigError(f"cannot {'resume' if self.resume else 'use'} {self.run_dir}: {path} is empty (0 bytes), "
                              "not a stored run; move it away to start a new run there")
        new_folder = not self.run_dir.exists()
        try:
            store = Store(self.run_dir)
        except BuildbenchError:
            if not existing:  # a store begun and cut short (a full disk) would block the next try
                _remove_new_store(self.run_dir, new_folder)
            raise
        if existing:
            manifest = store.manifest()
            if not manifest:
                store.close()
                raise ConfigError(f"cannot resume {self.run_dir}: {path} holds no run manifest (damaged or not a run)")
            old = manifest.get("config")
            if not self.resume:
                store.close()
                raise ConfigError(f"{self.run_dir} already holds a run; pass --resume to continue it "
                                  "or choose another --run-dir")
            if old is not None:
                # a run stored before paths were absolute named them against the cwd
                old = absolute_fields(old, Path.cwd(), self._paths)[0]
                given = self.config.identity()
                changed = [f"{k} {_short_repr(old.get(k))}, not {_short_repr(given[k])}"
                           for k in _IDENTITY if old.get(k) != given[k]]
                if changed:
                    store.close()
                    raise ConfigError(f"cannot resume {self.run_dir}: the stored run has {'; '.join(changed)}")
            return store
        try:
            # the resolved config beside the store, as a run file: `buildbench run --config` runs it again
            (self.run_dir / "run.yaml").write_text(self.config.to_yaml(), encoding="utf-8")
            store.write_manifest({
                "config": self.config.to_dict(),
                "versions": versions(),
                "created_unix": time.time(),
                "tasks": n_tasks,
                "pid": os.getpid(),
            })
        except (OSError, BuildbenchError) as exc:
            # A store without its manifest cannot be resumed (nor taken for a new run): the run
            # starts as if never begun, and the same command works once there is room.
            store.close()
            _remove_new_store(self.run_dir, new_folder)
            if isinstance(exc, OSError):
                raise BuildbenchError(f"cannot write {self.run_dir / 'run.yaml'}: {exc.strerror or exc}") from exc
            raise
        return store

    def _build_model(self) -> ChatModel:
        return self._model if self._model is not None else build_model(self.config)

    async def _run_on_loop(self, todo: Sequence[tuple[Task, int]], store: Store, bar: Progress,
                           model: ChatModel | None) -> None:
        gate = asyncio.Semaphore(self.config.concurrency)
        # Scoring is the CPU-heavy part of a model-backed episode, and it reads agent output with
        # native code: each scoring runs in a process of its own (`score_isolated`), at most
        # ``workers`` at once, off the event loop that all in-flight model calls share.
        scoring = asyncio.Semaphore(max(1, self.config.workers))
        suite_name = self.config.suite

        stop = threading.Event()

        async def score_bounded(task: Task, outcome: dict[str, Any]) -> dict[str, float]:
            async with scoring:
                return await asyncio.to_thread(score_isolated, suite_name, task, outcome, stop)

        # Each episode plays in a process of its own (`play_apart`): a native crash of env code ends
        # that episode, never the run. Its model calls and its scoring are still made here.
        threads = ThreadPoolExecutor(max_workers=self.config.concurrency, thread_name_prefix="buildbench-episode")

        async def one(task: Task, sample: int) -> None:
            async with gate:
                episode = await play_apart(execute_episode, self.config, task, sample, store.artifact_root, model,
                                           score_bounded, threads, stop)
            store.add_episode(episode)
            bar.advance(episode)

        # The scoring processes are started (and moved into their memory groups) while the agents
        # think, instead of on each scoring's path (`isolated_ready`: still one fresh process and
        # group per scoring). As many as episodes in flight (all may finish at once), at most
        # `READY_SCORERS` (~1.7 MB of private memory each while they wait).
        from .suite import suite_target

        ready = kept_ready(SCORE_LIMITS, preload=(suite_target(suite_name).partition(":")[0],), script_free=True,
                           count=min(max(2 * self.config.workers, self.config.concurrency), READY_SCORERS),
                           calls=len(todo))  # one scoring per episode at most
        try:
            with ready:
                await _all_or_stop([one(t, s) for t, s in todo], stop)
        finally:
            # stopped processes are killed within a poll, so this wait is short
            threads.shutdown(wait=True, cancel_futures=True)

    async def _run_in_pool(self, todo: Sequence[tuple[Task, int]], store: Store, bar: Progress) -> None:
        loop = asyncio.get_running_loop()
        # Bounded in-flight submissions: memory stays flat for big runs, and a kill loses at
        # most a few episodes of work.
        gate = asyncio.Semaphore(self.config.workers * 2)
        pools = [_pool(self.config.workers, self.config.suite)]
        args = (self.config, str(store.artifact_root))
        stop = threading.Event()

        async def one(task: Task, sample: int) -> None:
            async with gate:
                pool = pools[-1]
                try:
                    data = await loop.run_in_executor(pool, _episode_in_worker, args[0], task, sample, args[1])
                except BrokenProcessPool:
                    # A worker died (a native crash in env or scorer code) and took the pool down:
                    # every episode in flight lands here. Each re-runs alone in a process of its own,
                    # so only the one that crashes again is lost, stored as an error saying so.
                    if pools[-1] is pool:
                        pool.shutdown(wait=False, cancel_futures=True)
                        pools.append(_pool(self.config.workers, self.config.suite))
                    data = await asyncio.to_thread(_episode_alone, args[0], task, sample, args[1], stop)
            episode = Episode.from_dict(data)
            store.add_episode(episode)
            bar.advance(episode)

        def kill_workers() -> None:
            for pool in pools:
                _kill_workers(pool)

        try:
            await _all_or_stop([one(t, s) for t, s in todo], stop, kill_workers)
        finally:
            for pool in pools:
                pool.shutdown(wait=True, cancel_futures=True)
