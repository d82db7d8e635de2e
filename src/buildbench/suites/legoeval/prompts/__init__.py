"""Prompt templates of the LLM evaluator, in our own words (one ``.txt`` file each).

Placeholders are written ``$NAME$`` (the original's convention) and filled by :func:`fill`;
a placeholder left unfilled is an error, not silently sent to the model.
"""

from __future__ import annotations

import re
from pathlib import Path

from buildbench.harness.prompts import PromptFiles

_HERE = Path(__file__).resolve().parent
_PLACEHOLDER = re.compile(r"\$([A-Z_]+)\$")
#: The replaceable prompt texts (``-o prompts=DIR``): every ``.txt`` file here.
PROMPT_FILES = PromptFiles(_HERE, (".txt",), marker=_PLACEHOLDER.pattern)


def load(name: str) -> str:
    """The template ``prompts/<name>.txt`` (the run's ``-o prompts=DIR`` file when it has one)."""
    path = _HERE / f"{name}.txt"
    if not path.is_file():
        known = sorted(p.stem for p in _HERE.glob("*.txt"))
        raise KeyError(f"no prompt template {name!r} (known: {', '.join(known)})")
    return PROMPT_FILES.read(f"{name}.txt").strip()


def fill(name: str, **values: object) -> str:
    """Template ``name`` with every ``$KEY$`` replaced by ``values[KEY]``."""
    text = load(name)
    missing = sorted({m for m in _PLACEHOLDER.findall(text) if m not in values})
    if missing:
        raise KeyError(f"prompt {name!r}: no value for placeholder(s) {missing}")
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), text)
