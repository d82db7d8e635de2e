"""The shared vocabulary: Task, Env, Agent, Protocol, Episode, Runner, Store, Suite.

Names load on first use (:mod:`buildbench.lazy`): importing one light module of the harness
(errors, options) does not import the runner, the store or the model clients.
"""

from typing import TYPE_CHECKING

from buildbench.lazy import lazy_exports

if TYPE_CHECKING:
    from .agent import Agent, ScriptedAgent
    from .cache import cache_dir
    from .context import EpisodeContext
    from .env import Action, AgentError, Env, Observation, ResetResult, StepResult
    from .episode import SCORED_STATUSES, Episode, Step, is_scored
    from .errors import BuildbenchError, ConfigError, UnknownNameError
    from .export import export_jsonl, export_parquet
    from .options import COMMON_OPTIONS, OptionSpec, check_options
    from .protocol import Protocol, StepLoop
    from .report import print_report, run_report
    from .runner import RunConfig, Runner, RunResult, execute_episode
    from .store import Store
    from .suite import AgentSpec, ProtocolSpec, Suite, get_suite, mean_metrics, suite_names
    from .task import Task, episode_seed

_NAMES = {
    "agent": ("Agent", "ScriptedAgent"),
    "cache": ("cache_dir",),
    "context": ("EpisodeContext",),
    "env": ("Action", "AgentError", "Env", "Observation", "ResetResult", "StepResult"),
    "episode": ("SCORED_STATUSES", "Episode", "Step", "is_scored"),
    "errors": ("BuildbenchError", "ConfigError", "UnknownNameError"),
    "export": ("export_jsonl", "export_parquet"),
    "options": ("COMMON_OPTIONS", "OptionSpec", "check_options"),
    "protocol": ("Protocol", "StepLoop"),
    "report": ("print_report", "run_report"),
    "runner": ("RunConfig", "Runner", "RunResult", "execute_episode"),
    "store": ("Store",),
    "suite": ("AgentSpec", "ProtocolSpec", "Suite", "get_suite", "mean_metrics", "suite_names"),
    "task": ("Task", "episode_seed"),
}
if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(__name__, _NAMES)

__all__ = [
    "COMMON_OPTIONS", "SCORED_STATUSES", "Action", "Agent", "AgentError", "AgentSpec", "BuildbenchError", "ConfigError", "Env", "Episode",
    "EpisodeContext", "Observation", "OptionSpec", "Protocol", "ProtocolSpec", "ResetResult", "RunConfig",
    "RunResult", "Runner", "ScriptedAgent", "Step", "StepLoop", "StepResult", "Store", "Suite",
    "Task", "UnknownNameError", "cache_dir", "check_options", "episode_seed", "execute_episode", "export_jsonl",
    "export_parquet", "get_suite", "is_scored", "mean_metrics", "print_report", "run_report", "suite_names",
]
