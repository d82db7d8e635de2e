"""The RL reward of BuildArena steps: what a simulation the env runs during an episode is worth.

Only a control trial's step and a closed-loop round are simulated during an episode, so only they
carry a reward; library calls get 0, because whether a half-built machine is good is only known
when it is simulated, and the paper scores the final machine only (``score.score_episode``).
"""

from __future__ import annotations


def trial_reward(passed: bool, indicator: float) -> float:
    """The reward of one simulation: 1.0 when the task's pass test holds, else the indicator
    squashed into [0, 0.5) (``x / (1 + x)`` of its non-negative part, halved) so that a machine
    that moves, lifts or holds more is preferred but never equals a pass. The paper reports the
    pass rate and the indicator, not a reward; this shaping is ours."""
    if passed:
        return 1.0
    x = max(float(indicator), 0.0) if indicator == indicator else 0.0
    return 0.5 * x / (1.0 + x)
