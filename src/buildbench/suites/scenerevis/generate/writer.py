"""Optional model-written text: instructions and turn reasoning by any chat model through
:mod:`buildbench.llm` (the original used GPT for both, §3.2 and §3.4).

The model gets the facts our templates derived (the room's inventory, or the turn's
diagnosed bugs and the exact calls) and writes the text in its own words; the calls
themselves are never the model's. When no model is configured, or a call fails, the
deterministic template text is used and the record's ``text_source`` says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

INSTRUCTION_PROMPT = """Rewrite the room request below as a person would ask an interior designer, in \
{length}. Keep every object and style word it names; add nothing the room does not contain. Answer \
with the request only.

Request to rewrite: {draft}"""

REASONING_PROMPT = """You are planning one editing turn of a 3D room layout. The user's request: \
"{instruction}". The scene before the turn:
{scene}

The edits this turn makes, in order (fixed; do not change them):
{calls}

Notes from an automatic check of the scene:
{draft}

Write the spatial diagnosis that leads to exactly these edits: what is wrong (overlaps, objects \
outside the walls or floating, missing or misplaced furniture, wrong orientation, clutter or empty \
space), then why each edit and its values fix it. Plain prose, no tags, under 200 words."""


@dataclass
class TextWriter:
    """Writes instructions and reasoning with a chat model, or returns the template draft.

    Attributes:
        spec: A :func:`buildbench.llm.make_model` spec, or None for templates only.
        failures: One line per model call that failed (the template was used instead).
    """

    spec: str | None = None
    failures: list[str] = field(default_factory=list)
    _model: Any = None

    @property
    def source(self) -> str:
        if self.spec is None:
            return "buildbench templates (reasoning, instruction); no model was called"
        return f"model {self.spec}; template fallback on {len(self.failures)} failed call(s)"

    def _ask(self, prompt: str) -> str | None:
        if self.spec is None:
            return None
        from buildbench.llm import ChatRequest, Message, make_model

        if self._model is None:
            self._model = make_model(self.spec)
        resp = self._model.generate_sync(ChatRequest((Message.user(prompt),), temperature=0.0, seed=0))
        text = str(resp.text or "").strip()
        if resp.error is not None or not text:
            self.failures.append(resp.error.message if resp.error is not None else "empty answer")
            return None
        return text

    def instruction(self, draft: str, brief: bool) -> str:
        length = "one sentence of at most 20 words" if brief else "two to four sentences"
        return self._ask(INSTRUCTION_PROMPT.format(length=length, draft=draft)) or draft

    def reasoning(self, instruction: str, before: dict[str, Any], calls: list[dict[str, Any]], draft: str) -> str:
        scene = json.dumps({k: v for k, v in before.items() if k != "bounds_top"}, ensure_ascii=False)
        prompt = REASONING_PROMPT.format(instruction=instruction, scene=scene, draft=draft,
                                         calls="\n".join(json.dumps(c, ensure_ascii=False) for c in calls))
        return self._ask(prompt) or draft
