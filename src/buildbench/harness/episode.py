"""Records of what happened in an episode: one ``Step`` per action, one ``Episode`` per run.

Records are plain dataclasses that round-trip through JSON, so a run can be replayed,
inspected and exported as training data. Images are not stored inline: the episode
context writes them as PNG artifacts and the step keeps their paths.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .env import AgentError

EpisodeStatus = Literal["ok", "error", "api_error", "budget", "failed"]
#: What an episode's ``error`` is: an agent error's kind (``AgentErrorKind``), ``exception``
#: (the env or protocol raised), ``scorer`` (the scorer raised), ``agent_output`` (what the agent
#: produced was refused: `AgentFailure`) or ``crash`` (the process running the episode died).
ErrorKind = Literal["api_error", "timeout", "budget", "replay_miss", "context_length", "agent", "exception",
                    "scorer", "agent_output", "crash"]

#: Statuses whose episodes carry a score. ``budget`` (the agent spent its token or request budget)
#: and ``failed`` (its output was over a limit, malformed, missing or refused: `AgentFailure`,
#: scored with the suite's failing values) are the agent's own doing and count like any result;
#: ``error`` (the env, protocol or scorer broke) and ``api_error`` (the model endpoint failed)
#: have no score at all.
SCORED_STATUSES: tuple[str, ...] = ("ok", "budget", "failed")


@dataclass
class Step:
    """One agent action and the environment's answer.

    Attributes:
        index: 0-based position in the episode.
        role: Which part of a protocol acted (``agent``, ``planner``, ``builder``…).
        action_text: The model's text (or a JSON rendering of a structured action).
        tool_calls: ``{"id", "name", "arguments"}`` for each call.
        observation_text: Feedback returned to the agent.
        image_paths: PNG artifacts shown with the observation, relative to the run folder.
        reward: Env reward for the step.
        terminated / truncated: Gymnasium flags after the step.
        info: Env diagnostics (JSON-serialisable).
        usage: Tokens and requests spent on this action.
        duration_s: Wall time of act + step.
    """

    index: int
    role: str = "agent"
    action_text: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    observation_text: str = ""
    image_paths: list[str] = field(default_factory=list)
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    duration_s: float = 0.0


@dataclass
class Episode:
    """A finished episode, as committed to the store.

    ``metrics`` holds the scorer's numbers (structural pass, visual fidelity, …);
    ``outcome`` the env's final product (member list, machine, IFC path) that was scored.
    ``error_kind`` says what ``error`` is (see ``ErrorKind``).
    """

    task_id: str
    sample: int
    suite: str
    agent: str
    protocol: str
    seed: int
    status: EpisodeStatus = "ok"
    error: str | None = None
    error_kind: ErrorKind | None = None
    steps: list[Step] = field(default_factory=list)
    outcome: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    artifacts: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Episode:
        fields = dict(data)
        fields["steps"] = [Step(**s) for s in fields.get("steps", [])]
        return cls(**fields)


def is_scored(episode: Episode) -> bool:
    """Whether ``episode`` produced a result that may enter metric means."""
    return episode.status in SCORED_STATUSES


def status_of(error: AgentError) -> EpisodeStatus:
    """The status of an episode its agent ended with ``error``.

    A spent budget is the agent's own doing (scored), and so is a conversation its replies grew
    past the model's context window (``context_length``: the model's budget of tokens); an agent
    with nothing left to do is broken (``error``); a model call that failed is an API error.
    """
    if error.kind in ("budget", "context_length"):
        return "budget"
    return "error" if error.kind == "agent" else "api_error"


def as_failure(episode: Episode, failing: dict[str, float]) -> Episode:
    """A copy of an unscored episode that counts as a failed attempt.

    For reports that follow a paper which counted infrastructure failures as failed tasks:
    the metrics the suite computed for what the episode left (e.g. BIM-Edit's last commit),
    else the values a failed attempt has (``failing``: the suite's failure metrics — pass flags
    and scores 0). Every other metric stays n/a: filling 0 into a lower-is-better metric (a
    collision or invalid-action rate) would make a crash look perfect. The copy is a ``failed``
    (scored) episode whose ``metadata["counted_as_failure"]`` keeps the status it had, so status
    counts can still say what happened (`status_label`).
    """
    data = episode.to_dict()
    kept = {k: float(v) for k, v in episode.metrics.items() if isinstance(v, int | float) and v == v}
    data["metrics"] = {**{k: float(v) for k, v in failing.items()}, **kept}
    data["metadata"] = {**data["metadata"], "counted_as_failure": episode.status}
    data["status"] = "failed"
    return Episode.from_dict(data)


def status_label(episode: Episode) -> str:
    """The status a report counts ``episode`` under: its own, or for an unscored episode counted
    as a failure (`as_failure`) what it was and how it counts, e.g. ``api_error (counted as failed)``:
    the failure stays visible."""
    original = episode.metadata.get("counted_as_failure")
    return f"{original} (counted as failed)" if isinstance(original, str) else episode.status


def add_usage(total: dict[str, int], extra: dict[str, int]) -> dict[str, int]:
    """Sum two token/request counters key by key."""
    out = dict(total)
    for key, value in extra.items():
        out[key] = out.get(key, 0) + int(value)
    return out
