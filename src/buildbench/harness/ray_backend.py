"""Episodes as Ray tasks (``buildbench run … --backend ray``).

Each episode is one Ray task that plays and scores it on whichever node Ray picks and returns
the episode record; the driver (the process that called `Runner.run`) alone writes the store,
one transaction per episode, exactly as with the local backends, so ``--resume`` and the
exactly-once guarantee are unchanged.

- Model-backed (``io``) episodes reserve no CPU (they wait on the network) and are spread over
  the nodes; at most ``concurrency`` run at once across the whole cluster.
- CPU-bound episodes reserve one CPU each; Ray runs as many at once as the cluster has CPUs,
  and the driver keeps `IN_FLIGHT_PER_CPU` times that many submitted.
- A task whose worker process or node dies is re-run by Ray (`RAY_TASK_RETRIES` times); only
  its one result reaches the driver, and the store's ``(task_id, sample)`` key would refuse a
  second. An episode still without a result after the retries is not stored (a resumed run
  plays it again) and the run ends with a `BuildbenchError` naming how many were lost.

Workers build the chat model themselves from ``config.model`` (an HTTP client does not travel
between processes). Artifacts are written by the worker under the run folder's path on its
node: on a multi-node cluster put ``--run-dir`` on a filesystem every node mounts.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from buildbench.parallel import (
    RAY_TASK_RETRIES,
    cluster_cpus,
    connect_ray,
    enter_driver_dir,
    raise_task_error,
)

from .episode import Episode
from .errors import BuildbenchError, ConfigError
from .store import Store
from .task import Task

#: CPU-bound episodes submitted per cluster CPU: enough that a CPU never waits for the driver.
IN_FLIGHT_PER_CPU = 4

if TYPE_CHECKING:
    from buildbench.llm import ChatModel

    from .runner import RunConfig


class _Advance(Protocol):
    def advance(self, episode: Episode) -> None: ...


def prepare_ray(config: RunConfig) -> None:
    """Refuse what cannot work on a cluster and connect to it, before the run folder is touched.

    Raises:
        ConfigError: ``--record`` asked for, Ray not installed, or the cluster unreachable.
    """
    if config.record:
        raise ConfigError("--record writes one file from one process; record with the default backend, "
                          "then replay it with --backend ray")
    connect_ray(config.address)


class PlayEpisode(Protocol):
    """Plays one whole episode and returns its record (the runner's `play_on_worker`)."""

    def __call__(self, config: RunConfig, task: Task, sample: int, artifact_root: Path,
                 model: ChatModel | None) -> dict[str, Any]: ...


def _episode_on_worker(play: PlayEpisode, config: RunConfig, task: Task, sample: int, artifact_root: str,
                       model: ChatModel | None, cwd: str) -> dict[str, Any]:
    """One whole episode inside a Ray worker; its record goes back to the driver. ``play`` comes
    from the runner (Ray ships it by reference), so this module never imports the runner."""
    enter_driver_dir(cwd)
    return play(config, task, sample, Path(artifact_root), model)


async def run_on_ray(config: RunConfig, todo: Sequence[tuple[Task, int]], store: Store, bar: _Advance, *,
                     play: PlayEpisode, io_bound: bool, model: ChatModel | None = None) -> None:
    """Run ``todo`` as Ray tasks and store each finished episode as it arrives.

    Args:
        config: The run (its ``address`` names the cluster).
        todo: (task, sample) pairs not yet in the store.
        store: The run's store (written here, in the driver, only).
        bar: Progress.
        play: Plays one episode in a worker (`buildbench.harness.runner.play_on_worker`).
        io_bound: Model-backed episodes (bounded by ``config.concurrency``, no CPU reserved).
        model: A ready model to ship to the workers (tests); None: workers build their own.

    Raises:
        ConfigError: Ray is not installed or the cluster is unreachable.
        BuildbenchError: Some episodes had no result after their worker died ``RAY_TASK_RETRIES + 1`` times.
    """
    ray = connect_ray(config.address)
    options: dict[str, Any] = {"max_retries": RAY_TASK_RETRIES, "retry_exceptions": False}
    if io_bound:  # no CPU to reserve, so Ray would keep them all on this node unless told to spread
        options.update(num_cpus=0, scheduling_strategy="SPREAD")
    else:
        options["num_cpus"] = 1
    remote = ray.remote(_episode_on_worker).options(**options)
    limit = config.concurrency if io_bound else IN_FLIGHT_PER_CPU * cluster_cpus(ray)
    config_ref = ray.put(config)
    model_ref = ray.put(model)
    root = str(store.artifact_root)
    cwd = os.getcwd()
    lost: list[str] = []
    pending: dict[Any, tuple[Task, int]] = {}
    items = iter(todo)
    try:
        while True:
            while len(pending) < limit:
                nxt = next(items, None)
                if nxt is None:
                    break
                pending[remote.remote(play, config_ref, nxt[0], nxt[1], root, model_ref, cwd)] = nxt
            if not pending:
                break
            # ray.wait blocks; a thread keeps the driver's event loop (and its signals) free.
            ready = await asyncio.to_thread(_finished, ray, list(pending))
            for ref in ready:
                task, sample = pending.pop(ref)
                data = _result(ray, ref, task, sample, lost)
                if data is not None:
                    episode = Episode.from_dict(data)
                    store.add_episode(episode)
                    bar.advance(episode)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
    if lost:
        raise BuildbenchError(f"{len(lost)} episode(s) got no result after their Ray worker died "
                              f"{RAY_TASK_RETRIES + 1} times (first: {lost[0]}); the others are stored, "
                              "run again with --resume to play these")


def _finished(ray: Any, refs: list[Any]) -> list[Any]:
    """Wait for one task to finish, then take every other one already finished too."""
    ready, rest = ray.wait(refs, num_returns=1)
    if rest:
        more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
        ready += more
    return list(ready)


def _result(ray: Any, ref: Any, task: Task, sample: int, lost: list[str]) -> dict[str, Any] | None:
    try:
        return dict(ray.get(ref))
    except ray.exceptions.RayTaskError as exc:  # a bug outside the episode's own try (not an agent failure)
        raise_task_error(exc)
    except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
            ray.exceptions.ObjectLostError, ray.exceptions.OutOfMemoryError,
            ray.exceptions.TaskCancelledError) as exc:
        lost.append(f"{task.id} sample {sample}: {type(exc).__name__}")
    return None
