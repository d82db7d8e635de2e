"""What a SceneReVis episode produces: the final room layout and how the turns went."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from buildbench.harness.outcome import OPTIONAL, OutcomeRecord


@dataclass
class SceneReVisOutcome(OutcomeRecord):
    """``SceneReVisEnv.outcome()``, typed. Every key has a default, so a bare ``{"scene": …}``
    (a layout produced outside an episode) reads as an outcome too.

    Attributes:
        instruction: The room request the agent worked on.
        scene: The final scene as flat SceneReVis JSON (metres, yaw in degrees); None when no room
            was ever created.
        turns: Turns played, the creation turn included (count); None for a layout made outside
            an episode.
        termination: ``terminate`` (the agent ended it), ``budget`` (turns spent) or ``incomplete``.
        invalid_replies: Replies that could not be read as an action (count).
        applied_calls: Edit calls applied to the scene (count).
        address: How objects are addressed in the scene JSON (``id`` or ``name``).
        turn_rewards: The hybrid reward of each turn (spec §4.3), unitless, in turn order.
        trajectory_reward: The trajectory return over ``turn_rewards``.
        judge: The label of the reward's judge.
        latency_s: Generation time per scene in seconds (reset to the end of play, the reward's
            own work left out); absent until the protocol stops the clock.
        eval_judge: The evaluation judge's record (scores 1-10 or the failure); absent when no
            protocol settled one.
        geometry: The geometry level of the episode's physics (``box``, ``procedural``,
            ``mesh``); the score measures the final scene at the same level.
        vlm_feedback: One record per layout critique call (``-o vlm_feedback``: turn, status,
            critique text, error, latency); absent when no critique was asked for.
        extra: Keys of a stored outcome this type does not know (kept for the round trip).
    """

    SUITE = "scenerevis"

    instruction: str = ""
    scene: dict[str, Any] | None = None
    turns: int | None = field(default=None, metadata=OPTIONAL)
    termination: str = "incomplete"
    invalid_replies: int = 0
    applied_calls: int = 0
    address: str = "id"
    turn_rewards: list[float] = field(default_factory=list)
    trajectory_reward: float = 0.0
    judge: str = "rule"
    latency_s: float | None = field(default=None, metadata=OPTIONAL)
    eval_judge: dict[str, Any] | None = field(default=None, metadata=OPTIONAL)
    geometry: str = "box"
    vlm_feedback: list[dict[str, Any]] | None = field(default=None, metadata=OPTIONAL)
    extra: dict[str, Any] = field(default_factory=dict)
