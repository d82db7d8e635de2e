"""Replaying tool calls with the environment's own semantics (:mod:`..actions`).

Calls address one *instance*: every object carries a unique ``id`` (``obj_<n>``, n counting
every object the episode added, never reused); the chains write that id under the released
argument names (``jid``, ``jid_to_replace``), which the environment accepts when the value
is an instance id. Values are absolute. Added and replaced objects have no asset yet: the
data shows them with the masked jid (:data:`.flat.MASKED_JID`, §3.2 "JID masking").
"""

from __future__ import annotations

from typing import Any

from buildbench.harness import Task

from ..actions import Addressing, ReplyError, SceneState, apply_calls, parse_create_scene, parse_turn
from ..chain_tasks import chain_task
from .flat import MASKED_JID, Scene


class ToolCallError(ValueError):
    """A recorded chain does not replay; the message names the turn and the problem."""


def _copy_objects(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Objects hold strings and flat lists of numbers: copying those lists is a deep copy.
    return [{k: (list(v) if isinstance(v, list) else v) for k, v in o.items()} for o in objects]


class _State(SceneState):
    """The environment's state with a cheaper copy (the executor copies it on every reply;
    ``copy.deepcopy`` was most of the generator's time). The room is shared: no tool edits it."""

    def copy(self) -> _State:
        return _State(self.room, _copy_objects(self.objects), self.next_index)


def state_of(scene: Scene) -> SceneState:
    """The environment state of a flat scene, ids kept, the add counter past every ``obj_<n>``."""
    room = {k: scene[k] for k in ("room_type", "room_id", "bounds_top", "bounds_bottom")}
    objects = _copy_objects(scene["objects"])
    indices = [int(o["id"][4:]) for o in objects if o["id"].startswith("obj_") and o["id"][4:].isdigit()]
    return _State(room, objects, max(indices, default=0) + 1)


def flat_of(state: SceneState) -> Scene:
    """The flat scene the data shows (same keys as ``SceneState.to_flat``): objects without an
    asset get the masked jid."""
    objects = _copy_objects(state.objects)
    for o in objects:
        o.setdefault("jid", MASKED_JID)
    return {**state.room, "objects": objects}


def apply_turn(state: SceneState, calls: list[dict[str, Any]], where: str) -> tuple[SceneState, bool]:
    """The state after one turn's calls and whether it terminated; ToolCallError if the
    environment refuses any call (it then applies none)."""
    result = apply_calls(state, calls, Addressing.ID)
    if result.errors:
        raise ToolCallError(f"{where}: {result.errors[0]}")
    return result.state, result.terminated


def chain_turns(record: dict[str, Any]) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """The empty room and the tool calls of each turn of a written chain."""
    room: dict[str, Any] | None = None
    turns = []
    for i, msg in enumerate(record["messages"]):
        if msg["role"] != "assistant":
            continue
        where = f"{record.get('id', 'record')}.messages[{i}]"
        try:
            if room is None:
                room = parse_create_scene(msg["content"])
            else:
                turns.append(parse_turn(msg["content"]).calls)
        except ReplyError as exc:
            raise ToolCallError(f"{where}: {exc}") from None
    if room is None:
        raise ToolCallError(f"{record.get('id', 'record')}: no assistant turn")
    return room, turns


def oracle_task(record: dict[str, Any]) -> Task:
    """A harness task carrying the chain for the ``oracle`` agent (:func:`..chain_tasks.chain_task`)."""
    room, turns = chain_turns(record)
    turns = [t for t in turns if any(c.get("name") != "terminate" for c in t)]  # the oracle adds its own
    meta = record.get("metadata", {})
    return chain_task(str(record["id"]), str(meta.get("global_user_instruction", "")), room, turns,
                      reference_scene=meta.get("final_scene"), metadata={"source": "reverse_engineering"})


def replay(record: dict[str, Any]) -> Scene:
    """The scene a written chain (an ms-swift record) builds: the ``<create_scene>`` room,
    then every ``<tool_calls>`` turn applied in order, up to ``terminate``."""
    state: SceneState | None = None
    for i, msg in enumerate(record["messages"]):
        if msg["role"] != "assistant":
            continue
        where = f"{record.get('id', 'record')}.messages[{i}]"
        try:
            if state is None:
                state = SceneState.from_flat(parse_create_scene(msg["content"]), where=where)
                continue
            state, done = apply_turn(state, parse_turn(msg["content"]).calls, where)
        except ReplyError as exc:
            raise ToolCallError(f"{where}: {exc}") from None
        if done:
            break
    if state is None:
        raise ToolCallError(f"{record.get('id', 'record')}: no assistant turn")
    return flat_of(state)
