"""A Python literal a model wrote (``["a", "b"]``, single quotes allowed), read so that no
reply raises anything but ValueError.

``ast.literal_eval`` raises RecursionError on a long ``1+1+…`` chain and MemoryError on a
deep ``---…1`` (the parser's nesting guard reports it so, with no memory used), besides
ValueError and SyntaxError for text that is no literal.
"""

from __future__ import annotations

import ast
from typing import Any


def model_literal(text: str) -> Any:
    """``text`` as a Python literal.

    Raises:
        ValueError: It is not one, or is nested too deeply to read.
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise ValueError(str(exc)) from None
    except (RecursionError, MemoryError):
        raise ValueError("nested too deeply") from None
