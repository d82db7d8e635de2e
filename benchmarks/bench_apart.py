"""What playing an episode apart costs (`buildbench.harness.apart`): per episode and per model call.

- Per episode: the example suite's reference episodes played apart (a fork from the forkserver,
  the config and task sent, the episode sent back), against the same episodes played in this
  process; both score in-process here, so the difference is the process and its pipe alone.
- Per model call: round trips of a chat request (a 2 KB conversation) from the episode's process
  to the harness and its 200-byte answer back, against awaiting the same answer in-process.
- Env steps run inside the episode's process: they cross nothing, so their overhead is zero.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _common import Figure

from buildbench.harness import RunConfig, execute_episode
from buildbench.harness.apart import play_apart
from buildbench.harness.isolated import Channel, IsolationLimits, call_isolated
from buildbench.suites.example.generate import make_task

EPISODES = 40
CALLS = 500
_REQUEST = {"messages": [{"role": "user", "content": "x" * 2000}], "max_tokens": 64}
_ANSWER = {"text": "y" * 200, "usage": {"input_tokens": 500, "output_tokens": 50}}


async def _in_process_score(task: Any, outcome: dict[str, Any]) -> dict[str, float]:
    from buildbench.harness import get_suite

    suite = get_suite("example")
    return suite.score(task, suite.read_outcome(outcome))


async def _episodes(apart: bool) -> float:
    config = RunConfig(suite="example", agent="reference", protocol="one-shot", workers=0)
    tasks = [make_task(i, 0) for i in range(EPISODES)]
    threads = ThreadPoolExecutor(max_workers=1)
    try:
        if apart:  # start the forkserver outside the timing, as a run does once
            await play_apart(execute_episode, config, tasks[0], 0, None, None, _in_process_score, threads)
        t0 = time.perf_counter()
        for task in tasks:
            if apart:
                episode = await play_apart(execute_episode, config, task, 0, None, None, _in_process_score, threads)
            else:
                episode = await execute_episode(config, task, 0, None, None, _in_process_score)
            assert episode.status == "ok", episode.error
        return time.perf_counter() - t0
    finally:
        threads.shutdown()


def _asker(channel: Channel, n: int) -> float:
    async def ask_all() -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            await channel.ask(("generate", (_REQUEST,)))
        return time.perf_counter() - t0

    return asyncio.run(ask_all())


def _round_trips() -> tuple[float, float]:
    async def answer(request: Any) -> dict[str, Any]:
        return _ANSWER

    async def main() -> tuple[float, float]:
        loop = asyncio.get_running_loop()

        def serve(request_id: int, payload: Any, reply: Any) -> None:
            future = asyncio.run_coroutine_threadsafe(answer(*payload[1]), loop)
            future.add_done_callback(lambda done: reply(request_id, True, done.result()))

        done = await asyncio.to_thread(call_isolated, _asker, (CALLS,), IsolationLimits(memory_mb=None),
                                       serve=serve)
        t0 = time.perf_counter()
        for _ in range(CALLS):
            await answer(_REQUEST)
        return float(done.value), time.perf_counter() - t0

    return asyncio.run(main())


def run() -> list[Figure]:
    apart = asyncio.run(_episodes(True))
    here = asyncio.run(_episodes(False))
    calls, local = _round_trips()
    return [
        Figure(f"apart: {EPISODES} example episodes each in a process of its own", apart,
               f"the same {EPISODES} in this process", here,
               extra={"overhead_ms_per_episode": 1000 * (apart - here) / EPISODES}),
        Figure(f"apart: {CALLS} model-call round trips, episode process to harness", calls,
               f"{CALLS} in-process awaits", local, extra={"overhead_ms_per_call": 1000 * (calls - local) / CALLS}),
    ]


if __name__ == "__main__":
    for figure in run():
        print(figure.to_dict())
    print(Path(__file__).name, "done")
