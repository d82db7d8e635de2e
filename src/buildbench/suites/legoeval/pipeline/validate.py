"""Step 4: judge one constraint from the collected text and images (§4.5)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from buildbench.suites.legoeval.prompts import fill

from .arguments import outputs_text
from .chat import Asker
from .identify import TYPE_NAMES

_VERDICT = re.compile(r"<<\s*(True|False)\s*,\s*(.*?)>>", re.DOTALL)
#: Characters of tool output the validator reads.
INFORMATION_CHARS = 12000


@dataclass(frozen=True)
class Judgment:
    holds: bool
    explanation: str


def parse_judgment(reply: str) -> Judgment:
    matches = _VERDICT.findall(reply)
    if not matches:
        raise ValueError("no <<True, ...>> or <<False, ...>> in the reply")
    flag, text = matches[-1]
    return Judgment(flag == "True", " ".join(text.split()))


async def validate_constraint(asker: Asker, *, instruction: str, constraint: str, ctype: str,
                              information: dict[str, object], images: list[bytes]) -> Judgment:
    prompt = fill("validate", INSTRUCTION=instruction, TYPE_NAME=TYPE_NAMES[ctype], CONSTRAINT=constraint,
                  INFORMATION=outputs_text(information, INFORMATION_CHARS))
    return await asker.parsed("constraint validation", prompt, parse_judgment, images=images, retries=4)
