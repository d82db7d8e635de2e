"""Free text to a typed program: the template grammar first, then (optionally) a chat model.

The model only *writes a program*; :func:`~.program.parse_program` validates it and the
deterministic checker decides whether it holds, so the model's opinion of the scene never
enters the verdict. A reply that is not a valid program is sent back with the validator's
one-line error, up to ``retries`` times.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from buildbench.jsonio import parse_json
from buildbench.llm import ChatModel, ChatRequest, Message

from .program import (
    ATTRIBUTES,
    CMPS,
    LAYOUT_KINDS,
    OBJECT_RELATIONS,
    ROOM_RELATIONS,
    Program,
    ProgramError,
    parse_program,
)
from .text import TextError, parse

_SYSTEM = f"""You turn one constraint about a 3D house into a JSON program of a small language.
Answer with the JSON object only, inside a ```json block.

Selectors pick objects: {{"category": "chair", "room": "dining room", "color": .., "material": ..,
"shape": ..}} (category is a lower-case singular noun; the others are optional).
Programs (one of):
- {{"op": "count", "of": SELECTOR, "cmp": one of {list(CMPS)}, "n": int}}  (existence: cmp "ge", n 1)
- {{"op": "attribute", "of": SELECTOR, "attrs": {{subset of {list(ATTRIBUTES)}}}, "quant": "all"|"exists"}}
- {{"op": "relation", "rel": one of {list(OBJECT_RELATIONS)}, "a": SELECTOR, "b": SELECTOR,
   "c": SELECTOR (only for between / closer_than), "quant": "all"|"exists"}}
  (against_wall, in_corner and in_middle take no "b")
- {{"op": "relation", "rel": one of {list(ROOM_RELATIONS)}, "a": {{"room": ..}}, "b": {{"room": ..}}}}
- {{"op": "material", "room": .., "surface": "floor"|"wall", "value": a colour word, material family
   or material name, "direction": "north"|"south"|"east"|"west" (walls only, optional)}}
- {{"op": "layout", "kind": one of {list(LAYOUT_KINDS)}, ...}} with room_exists: room;
   room_count: cmp, n, room_type (optional); room_area: room, min_m2 and/or max_m2;
   door_between: rooms (two room names, "exterior" for the outside);
   window_count: room, cmp, n, direction (optional).
If the constraint states several facts, write the one it is mainly about."""


@dataclass(frozen=True)
class Translation:
    """A program and where it came from: ``template`` (the grammar read the text) or
    ``model`` (a chat model wrote it and the validator accepted it)."""

    program: Program
    source: str
    attempts: int = 0


def _json_block(text: str) -> object:
    m = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    body = m.group(1) if m else text[text.find("{"): text.rfind("}") + 1]
    return parse_json(body)


async def translate(model: ChatModel | None, text: str, *, where: str = "constraint",
                    retries: int = 2) -> Translation:
    """The program a constraint states.

    Raises:
        ProgramError: neither the grammar nor (when given) the model produced a valid
            program; the message names ``where`` and the last problem.
    """
    try:
        return Translation(parse(text, where), "template")
    except TextError as exc:
        if model is None:
            raise
        problem = str(exc)
    messages = [Message.system(_SYSTEM), Message.user(f"Constraint: {text}")]
    for attempt in range(1, retries + 2):
        reply = await model.generate(ChatRequest(messages=tuple(messages), temperature=0.0))
        if reply.error is not None:
            problem = f"{where}: the model call failed: {reply.error}"
            break
        try:
            program = parse_program(_json_block(reply.text), where)
            return Translation(program, "model", attempt)
        except (ProgramError, ValueError) as exc:
            problem = f"{where}: the model's program is invalid: {exc}"
            messages += [Message(role="assistant", content=reply.text),
                         Message.user(f"That program is invalid ({exc}). Answer with a corrected program.")]
    raise ProgramError(problem.splitlines()[0])
