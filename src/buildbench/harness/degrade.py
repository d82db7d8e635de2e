"""What every suite's ``degraded`` calibration agent shares: the ``-o degrade=FRACTION`` option,
the episode-seeded choice of what to corrupt, and an agent built once the seed is known.

A degraded agent takes its suite's reference answer and corrupts ``round(fraction · n)`` of its
``n`` parts (members, blocks, objects, edits, verdicts), so every metric can be checked for a
monotone response offline: fraction 0 is the reference itself, 1 corrupts every part. The
corrupted parts of a smaller fraction are a subset of those of a larger one under the same seed,
and each part's corruption is drawn once whatever the fraction, so a larger fraction only adds
damage (the response is monotone per episode wherever the metric is, not only on average).
Metrics a simulation or a geometric match decides are not monotone per episode, nor always as a
mean over a few tasks: a BuildArena machine missing more blocks can lift higher (lift-3's indicator
1.18 at 0.25, 1.43 at 0.5), a BIM-Edit door moved by more edits can land nearer its target
(geometry 0.40 at 0.25, 0.47 at 0.5); the tests check them far apart (0, 0.5, 1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .agent import Agent
from .context import EpisodeContext
from .env import Action, Observation
from .options import OptionSpec

#: ``-o degrade`` when a run does not give it.
DEFAULT_FRACTION = 0.5
DEGRADE_OPTION = OptionSpec("degrade", "float", "fraction of the reference answer the degraded agent corrupts",
                            minimum=0.0, maximum=1.0, default=DEFAULT_FRACTION)


class Corruption:
    """Which of ``n`` parts an episode corrupts, and the random draws each part's corruption uses.

    Args:
        n: How many parts the reference answer has.
        fraction: Share of them to corrupt, in [0, 1].
        seed: The episode seed.
        draws: Uniform [0, 1) numbers drawn per part (its corruption's kind, direction, size).
    """

    def __init__(self, n: int, fraction: float, seed: int, draws: int = 4) -> None:
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"degrade fraction {fraction} is outside [0, 1]")
        rng = np.random.default_rng([int(seed), 0xDE6])
        order = rng.permutation(n)
        self.u = rng.random((n, draws))
        """Per part (in the reference's order), its ``draws`` uniform numbers."""
        count = int(np.floor(fraction * n + 0.5))
        self.mask = np.zeros(n, dtype=bool)
        """True for each corrupted part."""
        self.mask[order[:count]] = True

    @property
    def indices(self) -> np.ndarray:
        """The corrupted parts' indices, ascending."""
        return np.flatnonzero(self.mask)


class SeededAgent(Agent):
    """An agent whose real policy is built on its first action, when the episode seed is known.

    Args:
        build: ``build(seed) -> Agent``.
        name: Label recorded with episodes.
        flags: Attributes protocols read off agents before they act (e.g. ``plays_script``).
    """

    def __init__(self, build: Callable[[int], Agent], name: str = "degraded", **flags: Any) -> None:
        self.name = name
        self._build = build
        self._inner: Agent | None = None
        for key, value in flags.items():
            setattr(self, key, value)

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        if self._inner is None:
            self._inner = self._build(int(ctx.seed))
        return await self._inner.act(observation, ctx)
