"""The model agent: any chat model through :class:`LLMAgent`, with the release's context rules.

Context (spec §2.7): only the current image is sent (earlier user turns keep their text), and
the oldest exchanges are dropped until the estimated prompt (characters / 4, plus
``IMAGE_TOKENS`` per image) leaves room for ``max_tokens`` of output within
``max_model_len``. Generation defaults follow the release's inference: temperature 0,
16,384 output tokens, a 40,960-token window.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from buildbench.harness import Agent, Task
from buildbench.harness.llm_agent import LLMAgent
from buildbench.harness.prompts import PromptFiles
from buildbench.llm import Message

from ..options import MAX_MODEL_LEN, SceneReVisOptions

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
#: The replaceable prompt texts (``-o prompts=DIR``): ``system.md``.
PROMPT_FILES = PromptFiles(PROMPTS)
#: Tokens the release budgets per attached image.
IMAGE_TOKENS = 1280
MAX_OUTPUT_TOKENS = 16384
_ID_SENTENCE = 'Every object has a unique `id` such as "obj_3"; name objects by that id.'
_JID_SENTENCE = ("Objects are named by their `jid` (asset id); remove_object removes every object carrying the jid "
                 "you give, the other tools change only the first one listed.")


def system_prompt(address: str = "id") -> str:
    """Our system prompt (own wording of the §2.2 content); ``address=jid`` explains jid naming."""
    text = PROMPT_FILES.read("system.md").strip()
    return text.replace(_ID_SENTENCE, _JID_SENTENCE) if address == "jid" else text


def estimate_tokens(message: Message) -> int:
    return len(message.text) // 4 + IMAGE_TOKENS * len(message.images) + 4


class SceneReVisLLMAgent(LLMAgent):
    """:class:`LLMAgent` with the release's image and length rules."""

    def __init__(self, *args: Any, max_model_len: int = MAX_MODEL_LEN, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_model_len = max_model_len

    def conversation(self) -> list[Message]:
        messages = super().conversation()
        system, rest = messages[0], messages[1:]
        last_image = max((i for i, m in enumerate(rest) if m.images), default=-1)
        rest = [m if i == last_image or not m.images else Message(m.role, m.text, m.tool_calls, m.tool_call_id)
                for i, m in enumerate(rest)]
        budget = self.max_model_len - (self.max_tokens or MAX_OUTPUT_TOKENS) - estimate_tokens(system)
        # Drop whole (user, assistant) exchanges from the front; the newest user turn always stays.
        while len(rest) > 1 and sum(estimate_tokens(m) for m in rest) > budget:
            cut = 1
            while cut < len(rest) - 1 and rest[cut].role != "user":
                cut += 1
            rest = rest[cut:]
        return [system, *rest]


def llm(task: Task, model: Any, options: SceneReVisOptions) -> Agent:
    """The model agent: temperature 0 and the release's lengths unless ``-o`` overrides them."""
    settings = {"temperature": 0.0, "max_tokens": MAX_OUTPUT_TOKENS, **options.agent_settings()}
    settings.pop("use_tools", None)  # the protocol is text tags, not function calls
    return SceneReVisLLMAgent(model, system_prompt=system_prompt(options.address),
                              max_model_len=options.max_model_len, name="llm", **settings)
