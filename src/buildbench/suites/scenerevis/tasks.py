"""SceneReVis tasks: the paper's 400 evaluation prompts (spec §5.1) and goal-oriented rooms.

The prompts ship as package data (``data/prompts/*.txt``, one per line, verbatim from
Runder-sun/SceneReVis ``split_prompts/`` at b1084e0, MIT, ``data/LICENSE-SceneReVis.txt``).
The released files back the paper's §4 split sizes:

* ``standard`` (300): bedroom 150 + living room 150;
* ``long-tail`` (100): dining room 50 + study room 50;
* ``default``: all 400; ``demo``: two prompts of each room type, drawn with the seed;
* ``goal`` (Table 3): seeded furnished rooms (:mod:`.generate.rooms`) made messy and/or
  incomplete by the rules of :mod:`.generate.goals`, one task per room and condition;
* ``chains``: seeded furnished rooms with one Algorithm 1 chain each (:mod:`.generate.reverse`),
  for the ``oracle`` agent, which rebuilds each room from its empty shell.

A task's inputs hold the instruction only (turn 0 sees text alone); its target and metadata
hold the room type (for the reward's room-type check and the report's tables). A task may
carry ``target["chain"]``, a recorded forward trajectory ``{"room": {...}, "turns":
[[call, ...], ...]}`` that the ``oracle`` agent replays, and ``inputs["initial_scene"]`` for
goal-oriented refinement (the env then starts at turn 1 on that scene).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from buildbench.harness import Task
from buildbench.harness.errors import ConfigError
from buildbench.harness.task_files import TaskShapeError

from .chain_tasks import SUITE, chain_task

PROMPTS = Path(__file__).resolve().parent / "data" / "prompts"
#: Prompt file stem → (room type as the scene names it, split).
ROOMS: dict[str, tuple[str, str]] = {
    "bedroom": ("bedroom", "standard"),
    "living_room": ("living room", "standard"),
    "dining_room": ("dining room", "long-tail"),
    "study_room": ("study room", "long-tail"),
}
DEMO_PER_ROOM = 2
#: Generated rooms behind the ``goal`` split (each gives up to one task per condition) and
#: the ``chains`` split.
GOAL_ROOMS = 14
CHAIN_ROOMS = 7
SPLITS = ("default", "standard", "long-tail", "demo", "goal", "chains")
#: Splits whose tasks never carry a recorded chain (the ``oracle`` and ``degraded`` agents need one).
#: ``default`` is not listed: it is also the split a run of ``--tasks FILE`` names, whose tasks may.
CHAINLESS_SPLITS = ("standard", "long-tail", "demo", "goal")


def read_prompts(room: str) -> list[str]:
    """The prompts of one room file, in file order (blank lines skipped)."""
    path = PROMPTS / f"{room}.txt"
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def prompt_task(room: str, index: int, prompt: str) -> Task:
    room_type, split = ROOMS[room]
    return Task(id=f"{room}_{index:03d}", suite=SUITE, inputs={"instruction": prompt},
                target={"room_type": room_type},
                metadata={"room": room, "room_type": room_type, "split": split, "source": "split_prompts"})


def prompt_tasks(rooms: tuple[str, ...]) -> list[Task]:
    return [prompt_task(room, i, p) for room in rooms for i, p in enumerate(read_prompts(room))]


def demo_tasks(seed: int) -> list[Task]:
    """``DEMO_PER_ROOM`` prompts of each room type, drawn with ``seed`` (file order kept)."""
    out: list[Task] = []
    for k, room in enumerate(ROOMS):
        prompts = read_prompts(room)
        rng = np.random.default_rng([seed, k])
        picks = sorted(int(i) for i in rng.choice(len(prompts), size=DEMO_PER_ROOM, replace=False))
        out.extend(prompt_task(room, i, prompts[i]) for i in picks)
    return out


def load_tasks(split: str, seed: int) -> list[Task]:
    """Tasks of ``split`` (see the module docstring)."""
    if split == "default":
        return prompt_tasks(tuple(ROOMS))
    if split in ("standard", "long-tail"):
        return prompt_tasks(tuple(r for r, (_, s) in ROOMS.items() if s == split))
    if split == "demo":
        return demo_tasks(seed)
    if split == "goal":
        return goal_split(seed)
    if split == "chains":
        return chain_split(seed)
    raise ConfigError(f"unknown split {split!r} of suite {SUITE}; splits: {', '.join(SPLITS)}")


def goal_split(seed: int, n_rooms: int = GOAL_ROOMS) -> list[Task]:
    """Goal-oriented refinement tasks under the three conditions of Table 3."""
    from .generate.goals import CONDITIONS, goal_tasks, to_task
    from .generate.rooms import generate_rooms

    rooms = generate_rooms(n_rooms, seed)
    goals = [g for condition in CONDITIONS for g in goal_tasks(rooms, condition, seed)]
    # Room by room, the three conditions in turn: a prefix of the split covers every condition.
    goals.sort(key=lambda g: (g["id"].rsplit("_", 1)[1], CONDITIONS.index(g["condition"])))
    return [to_task(g) for g in goals]


def chain_split(seed: int, n_rooms: int = CHAIN_ROOMS) -> list[Task]:
    """One generated room per task with a recorded forward chain from its empty shell."""
    from .generate.instructions import make_instruction
    from .generate.reverse import chain_rng, reverse_chain
    from .generate.rooms import generate_rooms

    out = []
    for i, room in enumerate(generate_rooms(n_rooms, seed)):
        chain = reverse_chain(room, chain_rng(seed, i, 0))
        instruction = make_instruction(room, np.random.default_rng([seed, i, 7])).text
        shell = {k: v for k, v in chain.empty.items() if k != "objects"}
        turns = [[{"name": c["name"], "arguments": c["arguments"]} for c in t.calls] for t in chain.turns]
        out.append(chain_task(f"chain_{seed}_{i:03d}", instruction, shell, turns, reference_scene=room,
                              metadata={"room": str(room["room_type"]).replace(" ", "_")}))
    return out


def check_task_record(task: Task) -> None:
    """SceneReVis's check of a task from a file (``Suite.validate_task``): what the env, the
    reward and the ``oracle`` agent read, so a record no episode can start from is refused at load
    rather than failing its episode (an empty instruction, an initial scene or chain room the env
    cannot read, a chain turn that is not a list of tool calls).

    Raises:
        TaskShapeError: naming the dotted field.
    """
    from .actions import MAX_CALLS_PER_TURN, TOOLS, ReplyError, SceneState

    instruction = task.inputs.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise TaskShapeError("inputs.instruction", "expected a non-empty string")
    for part, name in (("target", "room_type"), ("metadata", "room_type")):
        value = getattr(task, part).get(name)
        if value is not None and not isinstance(value, str):
            raise TaskShapeError(f"{part}.{name}", f"expected a string, got {type(value).__name__}")
    scenes: list[tuple[str, Any]] = [("inputs.initial_scene", task.inputs.get("initial_scene"))]
    if task.target.get("reference_scene") is not None:
        scenes.append(("target.reference_scene", task.target["reference_scene"]))
    chain = task.target.get("chain")
    if chain is not None:
        if not isinstance(chain, dict) or not isinstance(chain.get("room"), dict):
            raise TaskShapeError("target.chain", "expected {\"room\": {...}, \"turns\": [[call, ...], ...]}")
        scenes.append(("target.chain.room", {**chain["room"], "objects": []}))  # the oracle creates it empty
        turns = chain.get("turns")
        if not isinstance(turns, list):
            raise TaskShapeError("target.chain.turns", "expected a list of turns, each a list of tool calls")
        for t, turn in enumerate(turns):
            if not isinstance(turn, list) or len(turn) > MAX_CALLS_PER_TURN:
                raise TaskShapeError(f"target.chain.turns[{t}]", f"expected a list of at most {MAX_CALLS_PER_TURN} "
                                     "tool calls")
            for c, call in enumerate(turn):
                if not isinstance(call, dict) or call.get("name") not in TOOLS or not isinstance(
                        call.get("arguments"), dict):
                    raise TaskShapeError(f"target.chain.turns[{t}][{c}]", "expected {\"name\": TOOL, "
                                         f"\"arguments\": {{...}}}} with TOOL one of {', '.join(TOOLS)}")
    for where, scene in scenes:
        if scene is None:
            continue
        if not isinstance(scene, dict):
            raise TaskShapeError(where, f"expected a scene object, got {type(scene).__name__}")
        try:
            SceneState.from_flat(dict(scene), where=where)
        except ReplyError as exc:
            raise TaskShapeError(where, f"not a scene the env can read ({exc})") from None
