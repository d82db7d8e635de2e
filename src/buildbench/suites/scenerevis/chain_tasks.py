"""The SceneReVis task that carries a recorded chain for the ``oracle`` agent.

It lives below both :mod:`.tasks` (the ``chains`` split) and :mod:`.generate.replay` (chains
read back from ms-swift records), which build such tasks; :mod:`.tasks` re-exports it.
"""

from __future__ import annotations

from typing import Any

from buildbench.harness import Task

SUITE = "scenerevis"


def chain_task(task_id: str, instruction: str, room: dict[str, Any], turns: list[list[dict[str, Any]]],
               *, reference_scene: dict[str, Any] | None = None, metadata: dict[str, Any] | None = None) -> Task:
    """A task carrying a recorded chain for the ``oracle`` agent (ids as the env assigns
    them) and, optionally, the room the chain rebuilds."""
    room_type = str(room.get("room_type", ""))
    target: dict[str, Any] = {"room_type": room_type, "chain": {"room": room, "turns": turns}}
    if reference_scene is not None:
        target["reference_scene"] = reference_scene
    return Task(id=task_id, suite=SUITE, inputs={"instruction": instruction}, target=target,
                metadata={"room_type": room_type, "split": "chains", **(metadata or {})})
