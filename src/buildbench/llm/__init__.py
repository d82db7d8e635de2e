"""Chat model clients: OpenAI-compatible endpoints and Anthropic, behind one interface.

``make_model("openai:gpt-4o")`` gives a :class:`ChatModel`; ``await model.generate(request)``
returns a :class:`ChatResponse` whose ``error`` is set instead of raising when the call
fails after retries. Wrap a model in :class:`BudgetedChat` to cap an episode's spending and
in :class:`RecordReplay` to record a run and replay it offline.

The SDK-backed clients (:class:`OpenAIChat`, :class:`AnthropicChat`) load on first use:
importing the ``openai`` and ``anthropic`` packages takes seconds, and code that only needs
the types or a scripted model should not pay for it.
"""

from typing import TYPE_CHECKING, Any

from .budget import Budget, BudgetedChat, BudgetLimits
from .cache import RecordReplay, request_hash
from .client import ChatModel, LLMConfigError, RemoteChatModel
from .factory import PRESETS, make_model, parse_spec
from .retry import RetryPolicy
from .scripted import ScriptedChat
from .server import Fault, ScriptedServer, ServerReply, ServerRequest, ServerToolCall
from .types import (
    ApiError,
    ChatRequest,
    ChatResponse,
    ImagePart,
    Message,
    Part,
    TextPart,
    Tool,
    ToolCall,
    Usage,
    canonical_json,
)

__all__ = [
    "PRESETS",
    "AnthropicChat",
    "ApiError",
    "Budget",
    "BudgetedChat",
    "BudgetLimits",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "Fault",
    "ImagePart",
    "LLMConfigError",
    "Message",
    "OpenAIChat",
    "Part",
    "RecordReplay",
    "RemoteChatModel",
    "RetryPolicy",
    "ScriptedChat",
    "ScriptedServer",
    "ServerReply",
    "ServerRequest",
    "ServerToolCall",
    "TextPart",
    "Tool",
    "ToolCall",
    "Usage",
    "canonical_json",
    "make_model",
    "parse_spec",
    "request_hash",
]

if TYPE_CHECKING:
    from .anthropic_client import AnthropicChat
    from .openai_client import OpenAIChat

_LAZY = {"OpenAIChat": ".openai_client", "AnthropicChat": ".anthropic_client"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
