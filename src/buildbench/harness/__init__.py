"""The shared vocabulary: Task, Env, Agent, Protocol, Episode, Runner, Store, Suite."""

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

__all__ = [
    "COMMON_OPTIONS", "SCORED_STATUSES", "Action", "Agent", "AgentError", "AgentSpec", "BuildbenchError", "ConfigError", "Env", "Episode",
    "EpisodeContext", "Observation", "OptionSpec", "Protocol", "ProtocolSpec", "ResetResult", "RunConfig",
    "RunResult", "Runner", "ScriptedAgent", "Step", "StepLoop", "StepResult", "Store", "Suite",
    "Task", "UnknownNameError", "cache_dir", "check_options", "episode_seed", "execute_episode", "export_jsonl",
    "export_parquet", "get_suite", "is_scored", "mean_metrics", "print_report", "run_report", "suite_names",
]
