"""The shared vocabulary: Task, Env, Agent, Protocol, Episode, Runner, Store, Suite."""

from .agent import Agent, ScriptedAgent
from .cache import cache_dir
from .context import EpisodeContext
from .env import Action, Env, Observation, ResetResult, StepResult
from .episode import Episode, Step
from .errors import BuildbenchError, ConfigError, UnknownNameError
from .export import export_jsonl, export_parquet
from .protocol import Protocol, StepLoop
from .report import print_report, run_report
from .runner import RunConfig, Runner, RunResult, execute_episode
from .store import Store
from .suite import AgentSpec, ProtocolSpec, Suite, get_suite, mean_metrics, suite_names
from .task import Task, episode_seed

__all__ = [
    "Action", "Agent", "AgentSpec", "BuildbenchError", "ConfigError", "Env", "Episode",
    "EpisodeContext", "Observation", "Protocol", "ProtocolSpec", "ResetResult", "RunConfig",
    "RunResult", "Runner", "ScriptedAgent", "Step", "StepLoop", "StepResult", "Store", "Suite",
    "Task", "UnknownNameError", "cache_dir", "episode_seed", "execute_episode", "export_jsonl",
    "export_parquet", "get_suite", "mean_metrics", "print_report", "run_report", "suite_names",
]
