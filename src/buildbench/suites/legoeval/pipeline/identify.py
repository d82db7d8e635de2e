"""Step 1: split an instruction into ordered atomic constraints and type each (§4.1, §4.2)."""

from __future__ import annotations

import re

from buildbench.suites.legoeval.prompts import fill

from .chat import Asker

#: Paper label to short code.
LABELS = {"floor layout": "FL", "material selection": "MS", "object selection": "OS", "object placement": "OP"}
TYPE_NAMES = {v: k.title() for k, v in LABELS.items()}
_ITEM = re.compile(r"^\s*\d+\.\s+(.*\S)", re.MULTILINE)


def parse_constraints(reply: str) -> list[str]:
    """The numbered items of a reply (``1. ...`` lines)."""
    items = _ITEM.findall(reply)
    if not items:
        raise ValueError("no numbered constraints in the reply")
    return items


def parse_label(reply: str) -> str:
    """The constraint type code named in a reply (the first of the four labels it mentions)."""
    text = reply.lower()
    hits = [(text.find(label), code) for label, code in LABELS.items() if label in text]
    codes = [code for code in LABELS.values() if re.search(rf"\b{code}\b", reply)]
    if hits:
        return min(hits)[1]
    if len(codes) == 1:
        return codes[0]
    raise ValueError("no constraint type in the reply")


async def identify_constraints(asker: Asker, instruction: str) -> list[str]:
    return await asker.parsed("constraint identification", fill("identify", INSTRUCTION=instruction),
                              parse_constraints)


async def classify_constraint(asker: Asker, instruction: str, constraint: str) -> str:
    return await asker.parsed("constraint classification",
                              fill("classify", INSTRUCTION=instruction, CONSTRAINT=constraint), parse_label,
                              temperature=0.0)
