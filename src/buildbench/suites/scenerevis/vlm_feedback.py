"""A judge model's layout critique appended to the feedback (``-o vlm_feedback=SPEC``).

Our counterpart of the released inference's ``--enable-vlm-feedback``. What the release
does, as facts: after every round that leaves another round to play, a judge model gets the
round's merged render (top view left, diagonal right) and the user's request and is asked
for the one or two most important layout problems other than collisions and out-of-bounds
(those have their own physics feedback), answered as one line of at most 50 words starting
``[Layout]``, or nothing when the layout is fine. The call asks for at most 100 completion
tokens at temperature 0.1. An answer that holds one of :data:`NO_ISSUE_PHRASES` counts as no
critique; a failed call gives no critique. The critique follows the physics feedback, joined
by a space.

Here the protocol (:mod:`.protocols`; like the evaluation judge, the critic is the protocol's
own model client, never called from env code) asks the judge after each step that leaves a
turn to play, and the env's ``layout_feedback`` control folds the critique into the
observation the agent sees next: appended with a space to the last line of the
``<feedback>`` block (the physics hint when there is one), or as the block's only line. The
prompt text is our own. Every call is logged as a ``protocol`` step whose text is the
critique (so an SFT export shows it as part of the env's answer) and kept in the outcome's
``vlm_feedback`` list (turn, status, critique, reply, error, latency, usage);
``-o vlm_feedback_record=PATH`` records the calls to a JSONL file and replays them from it,
as ``eval_judge_record`` does. Differences from the release: a
critique wrapped in quotes is unwrapped (an answer of ``""`` is no critique), and a failed
call is recorded as ``status: error`` with its message instead of a printed warning.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from buildbench.llm import ChatModel, ChatRequest, Message

#: Completion budget and sampling temperature of a critique call (the release's).
MAX_TOKENS = 100
TEMPERATURE = 0.1
#: Answers holding one of these (case-insensitive) are "nothing to fix" (the release's list).
NO_ISSUE_PHRASES = ("no issue", "looks good", "well-designed", "properly placed", "no problems")
#: Characters of the judge's reply kept in a record.
REPLY_KEEP = 1000

SYSTEM = ("You are an interior designer checking a furniture layout for a benchmark. You only point "
          "out what should change, briefly.")


def critique_prompt(instruction: str) -> str:
    """Our request text for one critique (spec: top 1-2 non-physics issues, one line)."""
    return (
        f"The room was laid out for this request: {instruction}\n\n"
        "The picture shows the room from above (left half) and from a high corner (right half). "
        "Name at most the two layout problems that matter most, such as: the bed, sofa or other main "
        "piece floating in the middle of the room or facing the wrong way; furniture bunched in one "
        "part of the room while the rest stands empty; a piece this kind of room needs that is missing. "
        "Leave out pieces overlapping each other or sticking through the walls: another check reports "
        "those.\n"
        "Answer on a single line of no more than 50 words that begins with [Layout], names the "
        "problems and says what to move or add, for example: [Layout] Desk faces the wall beside the "
        "door; wardrobe missing. Turn the desk toward the window and add a wardrobe on the west wall.\n"
        "If nothing needs changing, answer with nothing at all."
    )


def critique_request(image: np.ndarray, instruction: str) -> ChatRequest:
    """The chat request of one critique: our prompt and the merged render."""
    return ChatRequest(
        messages=(Message.system(SYSTEM), Message.user(critique_prompt(instruction), [image])),
        temperature=TEMPERATURE,
        max_tokens=MAX_TOKENS,
    )


def critique_text(reply: str) -> str:
    """The critique in a judge's reply: "" when it says there is nothing to fix."""
    text = reply.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    if any(phrase in text.lower() for phrase in NO_ISSUE_PHRASES):
        return ""
    return text


@dataclass
class Critique:
    """One critique call: ``status`` ``ok`` (``text`` may be empty: nothing to fix) or ``error``."""

    turn: int
    status: str
    text: str = ""
    reply: str = ""
    error: str = ""
    latency_s: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["reply"] = self.reply[:REPLY_KEEP]
        return out


async def critique(model: ChatModel, image: np.ndarray, instruction: str, turn: int) -> Critique:
    """Ask ``model`` for the layout critique of one render; a failed call is a ``status: error``
    record with no critique, never an exception (the episode goes on without it)."""
    t0 = time.perf_counter()
    try:
        response = await model.generate(critique_request(image, instruction))
    except Exception as exc:  # a replay miss or a client fault: recorded, never fatal to the episode
        return Critique(turn, "error", error=f"{type(exc).__name__}: {exc}"[:500],
                        latency_s=round(time.perf_counter() - t0, 4))
    latency = round(time.perf_counter() - t0, 4)
    reply = response.text or ""
    if response.error is not None:
        return Critique(turn, "error", reply=reply, error=str(response.error)[:500], latency_s=latency,
                        usage=response.usage.to_dict())
    return Critique(turn, "ok", critique_text(reply), reply, latency_s=latency, usage=response.usage.to_dict())
