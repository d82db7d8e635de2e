"""What a furniture family's builder is given: the object's box, palette, words and seed."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from buildbench.scenes.assets.colors import Palette
from buildbench.scenes.assets.procedural.parts import Parts


@dataclass(frozen=True)
class Spec:
    """``kind``: the builder's key the category resolved to (``bed``, ``bunk bed``…);
    ``words``: the lower-case words of the category, description and asset id (``round``,
    ``glass``…); ``rng``: seeded by the object's identity, so a mesh never changes between
    runs."""

    kind: str
    size: tuple[float, float, float]
    palette: Palette
    words: frozenset[str]
    rng: np.random.Generator

    def has(self, *words: str) -> bool:
        return any(w in self.words for w in words)

    def pick(self, low: float, high: float) -> float:
        """A seeded proportion in ``[low, high]``."""
        return float(low + (high - low) * self.rng.random())


Builder = Callable[[Parts, Spec], None]


def words_of(*texts: object) -> frozenset[str]:
    out: set[str] = set()
    for text in texts:
        if isinstance(text, str):
            spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
            out.update(w for w in re.split(r"[^a-z]+", spaced.lower()) if w)
    return frozenset(out)
