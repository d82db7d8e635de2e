"""The ``degraded`` calibration agent: the task's reference design with a seeded, nested fraction
``-o degrade=FRACTION`` of its call history corrupted (see :mod:`buildbench.harness.degrade`),
played through the env one library call per step like the other design agents.

Every call but ``start`` is a part. A corrupted ``attach_block_to`` is, by draw, dropped, moved
(attached on another face) or made with the wrong block; any other corrupted call (connections,
twists, control keys, placed machines) is dropped. A dropped block shifts the ids of the blocks
after it, so later calls build on the wrong blocks or fail: damage compounds as it would for a
model that lost track of its ids.
"""

from __future__ import annotations

from buildbench.harness import Agent, Task
from buildbench.harness.degrade import Corruption, SeededAgent
from buildbench.llm import ChatModel

from .agents import DesignAgent
from .designs import CANNON, REFERENCE, TORCH, WHEEL, WOOD, Call, Design
from .options import BuildArenaOptions

#: Faces a moved block may be attached on instead.
FACES = ("A", "B", "C", "D", "E", "F")
#: Block types a wrong block is drawn from (never the one the reference uses).
BLOCKS = (WOOD, WHEEL, CANNON, TORCH)


def _corrupt(calls: list[Call], picks: dict[int, tuple[float, float]]) -> list[Call]:
    out: list[Call] = []
    for i, call in enumerate(calls):
        if i not in picks:
            out.append(call)
            continue
        u_kind, u_choice = picks[i]
        kind = min(int(u_kind * 3), 2) if call["op"] == "attach_block_to" else 0
        params = dict(call["params"])
        if kind == 1:
            faces = [f for f in FACES if f != params.get("face")]
            out.append({"op": call["op"], "params": {**params, "face": faces[int(u_choice * len(faces))]}})
        elif kind == 2:
            blocks = [b for b in BLOCKS if b != params.get("new_block")]
            out.append({"op": call["op"], "params": {**params, "new_block": blocks[int(u_choice * len(blocks))]}})
    return out


def degrade_design(design: Design, fraction: float, seed: int) -> Design:
    """``design`` with ``fraction`` of its calls (saved parts' first, then its own; ``start`` excepted)
    dropped, moved or given the wrong block."""
    lists = [*(design.saved or {}).values(), design.calls]
    index = [(k, i) for k, calls in enumerate(lists) for i, call in enumerate(calls) if call["op"] != "start"]
    c = Corruption(len(index), fraction, seed, draws=2)
    picks: list[dict[int, tuple[float, float]]] = [{} for _ in lists]
    for j in c.indices:
        k, i = index[j]
        picks[k][i] = (float(c.u[j, 0]), float(c.u[j, 1]))
    corrupted = [_corrupt(calls, p) for calls, p in zip(lists, picks, strict=True)]
    saved = dict(zip(design.saved or {}, corrupted[:-1], strict=True)) or None
    return Design(f"{design.name} (degraded)", corrupted[-1], saved)


def degraded(task: Task, model: ChatModel | None, options: BuildArenaOptions) -> Agent:
    make = REFERENCE.get(task.id)
    if make is None:
        raise ValueError(f"no reference design for task {task.id!r} (have: {', '.join(REFERENCE)})")
    fraction = options.degrade
    return SeededAgent(lambda seed: DesignAgent(degrade_design(make(), fraction, seed), "degraded"),
                       plays_script=True)
