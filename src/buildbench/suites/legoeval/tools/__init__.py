"""The 21 LEGO-Eval tools (§3): 10 textual, 8 environment, 3 multimodal, with their registry."""

from .context import SceneIndex, ToolArgumentError, ToolContext
from .environment import image_key, is_image_key
from .registry import (
    CONSTRAINT_TYPES,
    LIST_TOOLS,
    MENUS,
    TOOLS,
    ToolSpec,
    call_tool,
    get_tool,
    llm_tools,
    normalise_args,
    run_tool,
    tool_menu,
)

__all__ = [
    "CONSTRAINT_TYPES", "LIST_TOOLS", "MENUS", "TOOLS", "SceneIndex", "ToolArgumentError", "ToolContext",
    "ToolSpec", "call_tool", "get_tool", "image_key", "is_image_key", "llm_tools", "normalise_args",
    "run_tool", "tool_menu",
]
