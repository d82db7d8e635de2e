"""A reverse chain as an ms-swift multimodal conversation record (spec §3.5).

Turns, as the environment runs them (:mod:`..env`): the user's request alone; the assistant's
``<create_scene>`` with the empty room; then per step a user turn (``<image>`` when images
are written, the request on the first step and "Please continue…" after, and the current
scene as ``<current_scene>`` + a fenced json block) answered by ``<think>`` + ``<tool_calls>``;
last, the finished room answered by ``terminate``. Scene JSON is formatted by the
environment's rules (:func:`scene_json`), so training text and live observations match.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

from .chain_filter import ChainGrade
from .diagnose import diagnose
from .flat import Scene, empty_room
from .instructions import Instruction
from .reasoning import final_reasoning, turn_reasoning
from .reverse import ReverseChain
from .writer import TextWriter

SYSTEM_PROMPT = """You are a spatial layout planner for 3D rooms. You build and repair a room by editing \
its scene JSON with tools, one turn at a time.

On the first turn, answer only with <create_scene> holding a ```json block: the empty room with \
room_type, room_id, bounds_top and bounds_bottom (matching [x, y, z] vertices in metres, floor at \
y = 0, a rectangle of 4 vertices unless the request needs another shape) and "objects": [].

On every later turn you see a picture (left: top view, the basis for spotting overlaps and objects \
outside the walls; right: a diagonal view, the basis for judging the layout) with blue boxes, \
arrows for each object's front and red floor dots every 1 m labelled (x, z), and the scene JSON. \
Answer with <think> (what is wrong: physical conflicts such as overlaps, objects outside the walls \
or floating; layout problems such as misplaced or missing core furniture and wrong orientation; \
spatial problems such as clutter or unused space; then what you will change and why) followed by \
<tool_calls> holding a JSON list of {"id": "tool_1", "name": ..., "arguments": {...}} run in order.

Tools (values are absolute; "jid" names one object by its id):
- add_object: object_description, position [x, y, z] (bottom centre), rotation [x, y, z, w], size [w, h, d]
- remove_object: jid
- move_object: jid, new_position
- rotate_object: jid, new_rotation
- scale_object: jid, new_size
- replace_object: jid_to_replace, new_object_description
- terminate: reason

Fix physical conflicts first, then improve the layout; in an empty room add the core furniture \
first. Work out the final state of every call before you write it. Call terminate when the room \
meets the request."""

def scene_json(value: Any, indent: str = "") -> str:
    """The environment's scene formatting (:func:`..env.scene_json`: two-space indented
    JSON with every list of numbers on one line), built directly: ``json.dumps`` with an
    indent runs the pure-Python encoder and was a third of the generator's time. A test
    holds the two equal."""
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = ",\n".join(f"{inner}{json.dumps(k, ensure_ascii=False)}: {scene_json(v, inner)}"
                            for k, v in value.items())
        return "{\n" + items + "\n" + indent + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            return "[" + ", ".join(json.dumps(v) for v in value) + "]"
        return "[\n" + ",\n".join(inner + scene_json(v, inner) for v in value) + "\n" + indent + "]"
    return json.dumps(value, ensure_ascii=False)


def scene_block(scene: Scene) -> str:
    """The ``<current_scene>`` block of a user turn, as :func:`..env.scene_block` writes it."""
    return f"<current_scene>\n```json\n{scene_json(scene)}\n```\n</current_scene>"


CONTINUE = 'Please continue to improve the scene based on the original request: "{instruction}"'
DONE_REASON = "The layout is complete: it meets the request and needs no further edits."


def chain_id(source: Scene, seed: int, scene_index: int, rank: int) -> str:
    """``multi_turn_edit_<scene>_<rank>_<8 hex>``: stable for the same seed and room."""
    key = f"{seed}|{scene_index}|{rank}|{source.get('room_id', '')}"
    return f"multi_turn_edit_{scene_index}_{rank}_{hashlib.sha1(key.encode()).hexdigest()[:8]}"


def _user(text: str, scene: Scene, with_image: bool) -> dict[str, str]:
    return {"role": "user", "content": ("<image>\n" if with_image else "") + f"{text}\n\n{scene_block(scene)}"}


def _assistant(think: str, calls: list[dict[str, Any]]) -> dict[str, str]:
    body = "[\n" + ",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in calls) + "\n]"
    return {"role": "assistant", "content": f"<think>\n{think}\n</think>\n\n<tool_calls>\n{body}\n</tool_calls>"}


def shown_scenes(chain: ReverseChain) -> list[Scene]:
    """The scene of every user turn after turn 0, in order (the images render these)."""
    return [t.before for t in chain.turns] + [chain.turns[-1].after if chain.turns else chain.source]


def chain_record(
    chain: ReverseChain,
    grade: ChainGrade,
    instruction: Instruction,
    *,
    record_id: str,
    rng: np.random.Generator,
    images: list[str] | None = None,
    writer: TextWriter | None = None,
) -> dict[str, Any]:
    """The ms-swift record of one chain; ``images`` are the paths of the per-turn renders;
    ``writer`` rewrites the reasoning with a chat model (templates when None)."""
    writer = writer or TextWriter()
    with_image = images is not None
    room = empty_room(chain.source)
    messages: list[dict[str, str]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": instruction.text},
        {"role": "assistant", "content": f"<create_scene>\n```json\n{scene_json(room)}\n```\n</create_scene>"},
    ]
    scenes = shown_scenes(chain)
    diags = [diagnose(s) for s in scenes]
    for k, turn in enumerate(chain.turns):
        head = instruction.text if k == 0 else CONTINUE.format(instruction=instruction.text)
        messages.append(_user(head, turn.before, with_image))
        think = turn_reasoning(instruction.text, turn.before, turn.calls, turn.after, rng, (diags[k], diags[k + 1]))
        think = writer.reasoning(instruction.text, turn.before, turn.calls, think)
        messages.append(_assistant(think, turn.calls))
    final = scenes[-1]
    messages.append(_user(CONTINUE.format(instruction=instruction.text), final, with_image))
    messages.append(_assistant(final_reasoning(final, diags[-1]), [
        {"id": "tool_1", "name": "terminate", "arguments": {"reason": DONE_REASON}}]))
    return {
        "id": record_id,
        "images": list(images or []),
        "messages": messages,
        "metadata": {
            "scene_id": chain.source.get("room_id", ""),
            "room_type": chain.source.get("room_type", ""),
            "total_turns": len(chain.turns) + 2,
            "global_user_instruction": instruction.text,
            "instruction_kind": instruction.kind,
            "instruction_style": instruction.style,
            "final_scene": final,
            "generation_method": "reverse_engineering",
            "target_turns": chain.target_turns,
            "ops": list(chain.ops),
            "chain_score": grade.to_dict(),
            "text_source": writer.source,
        },
    }
