"""The pipe between an episode played apart and the harness (`call_isolated(..., serve=)`):
concurrent requests answered in any order, exceptions as themselves or as their text (never a
hang), and the harness's environment as it is at the call."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest

from buildbench.harness.isolated import Channel, IsolationLimits, call_isolated

LIMITS = IsolationLimits(wall_s=60, cpu_s=30, memory_mb=None)


class _Odd(Exception):
    """Pickles, but cannot be loaded again: its ``__init__`` takes two arguments."""

    def __init__(self, a: int, b: int) -> None:
        super().__init__(f"odd {a} {b}")


def _ask_three(channel: Channel) -> list[Any]:
    async def main() -> list[Any]:
        return list(await asyncio.gather(*(channel.ask(("double", n)) for n in (3, 1, 2))))

    return asyncio.run(main())


def _ask_and_catch(channel: Channel, what: str) -> str:
    async def main() -> str:
        try:
            await channel.ask((what, 0))
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        return "no exception"

    return asyncio.run(main())


def _raise_odd() -> None:
    raise _Odd(1, 2)


def _environment(name: str) -> str | None:
    return os.environ.get(name)


def _serve(loop: asyncio.AbstractEventLoop) -> Any:
    async def answer(kind: str, n: int) -> int:
        if kind == "fail":
            raise KeyError("no such thing")
        if kind == "odd":
            raise _Odd(3, 4)
        await asyncio.sleep(0.05 * n)  # answers come back in another order than asked
        return 2 * n

    def serve(request_id: int, payload: Any, reply: Any) -> None:
        future = asyncio.run_coroutine_threadsafe(answer(*payload), loop)
        future.add_done_callback(lambda done: reply(request_id, done.exception() is None,
                                                     done.exception() or done.result()))

    return serve


def _call(fn: Any, args: tuple[Any, ...]) -> Any:
    async def main() -> Any:
        return await asyncio.to_thread(call_isolated, fn, args, LIMITS, serve=_serve(asyncio.get_running_loop()))

    return asyncio.run(main())


def test_concurrent_requests_get_their_own_answers() -> None:
    done = _call(_ask_three, ())
    assert done.status == "ok" and done.value == [6, 2, 4]


@pytest.mark.parametrize(("what", "expected"), [("fail", "KeyError: 'no such thing'"),
                                                ("odd", "RuntimeError: _Odd: odd 3 4")])
def test_an_exception_of_the_harness_reaches_the_child_as_itself_or_as_its_text(what: str, expected: str) -> None:
    done = _call(_ask_and_catch, (what,))
    assert done.status == "ok" and done.value == expected


def test_an_exception_that_cannot_be_loaded_again_comes_back_as_its_text() -> None:
    done = call_isolated(_raise_odd, (), LIMITS)
    assert done.status == "error" and done.error == "RuntimeError: _Odd: odd 1 2"


def test_the_child_sees_the_environment_of_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    call_isolated(_environment, ("HOME",), LIMITS)  # the forkserver runs before the variable is set
    monkeypatch.setenv("BUILDBENCH_APART_PROBE", "seen")
    assert call_isolated(_environment, ("BUILDBENCH_APART_PROBE",), LIMITS).value == "seen"
