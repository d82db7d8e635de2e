"""The SceneReVis RL reward (spec §4.3), every term of it: the env asks it turn by turn, training reads
its breakdowns. An episode's scores are :mod:`..score`'s and their aggregates :mod:`..metrics`'s.

* :mod:`.hybrid`: the per-turn rewards (turn 0, intermediate, final) and the trajectory return,
  with the piecewise physics terms, the fuse and the overrides;
* :mod:`.format`: r_init of the room creation and r_fmt of the tool-call replies;
* :mod:`.size`: R_size against the size priors or the retrieved asset sizes;
* :mod:`.released`: R_support by the released rules (the released mode's).

The physics the terms read is :mod:`..check`'s and the semantic judge :mod:`..judge`'s; neither
imports this package.
"""

from .format import format_reward, init_reward
from .hybrid import (
    FINAL_WEIGHTS,
    TURN_WEIGHTS,
    HybridReward,
    TurnReward,
    collision_rate_reward,
    oob_rate_reward,
    oob_volume_reward,
    penetration_reward,
    presence_score,
    relevance_score,
    support_reward,
    trajectory_return,
)
from .released import released_support_reward
from .size import SizeVerdict, size_reward

__all__ = [
    "FINAL_WEIGHTS",
    "TURN_WEIGHTS",
    "HybridReward",
    "SizeVerdict",
    "TurnReward",
    "collision_rate_reward",
    "format_reward",
    "init_reward",
    "oob_rate_reward",
    "oob_volume_reward",
    "penetration_reward",
    "presence_score",
    "relevance_score",
    "released_support_reward",
    "size_reward",
    "support_reward",
    "trajectory_return",
]
