"""Registration of the DreamHouse suite (import string ``buildbench.suites.dreamhouse.suite:suite``)."""

from __future__ import annotations

from buildbench.harness import AgentSpec, ProtocolSpec, Suite, Task

from . import agents
from .degrade import degraded
from .env import make_env
from .figures import figures
from .options import DreamHouseOptions
from .outcome import DreamHouseOutcome
from .prompts import PROMPT_FILES
from .protocols import DESCRIPTIONS, DreamHouseProtocol, make_protocol
from .released_agent import PREFIX, released_agent_spec
from .report import summarize
from .score import failure_metrics, score
from .tasks import SPLITS, load_tasks, validate_task


def _protocol(name: str) -> ProtocolSpec:
    def factory(task: Task, options: DreamHouseOptions) -> DreamHouseProtocol:
        return make_protocol(name, options)

    return ProtocolSpec(name, factory, DESCRIPTIONS[name])


_AGENTS = {
    "oracle": AgentSpec("oracle", agents.oracle, "the ground truth as Blender Python (-o action_format=json|tools)"),
    "safe-house": AgentSpec("safe-house", agents.safe_house,
                            "ignores the images; a code-compliant rectangular frame from the context fields"),
    **{name: AgentSpec(name, agents.fault_agent(name), desc) for name, (_, desc) in agents.FAULTS.items()},
    "degraded": AgentSpec("degraded", degraded, "calibration: the oracle with -o degrade=FRACTION of its members "
                          "dropped, moved or rotated (seeded)"),
    "llm": AgentSpec("llm", agents.llm, "a chat model with the DreamHouse prompts", needs_model=True, kind="io"),
}

suite = Suite(
    name="dreamhouse",
    description="Frame a timber house from five views in Blender Python; 10 IRC-based structural tests.",
    load_tasks=load_tasks,
    make_env=make_env,
    agents=_AGENTS,
    protocols={name: _protocol(name) for name in DESCRIPTIONS},
    score=score,
    headline=("structural_pass", "joint_pass", "pass_rate", "visual_fidelity", "topological_fidelity"),
    units={"structural_pass": "0/1", "joint_pass": "0/1", "pass_rate": "share of tests, 0-1",
           "visual_fidelity": "0-1", "topological_fidelity": "0-1"},
    task_type="complexity",
    figures=figures,
    failure_metrics=failure_metrics,
    summarize=summarize,
    splits=SPLITS,
    default_agent="oracle",
    default_protocol="planner-atomic",
    cli="buildbench.suites.dreamhouse.cli:cli",
    options=DreamHouseOptions,
    outcome_type=DreamHouseOutcome,
    prompts=PROMPT_FILES,
    # Checks the released fields too; a task without a target frame (a released pack) is allowed.
    validate_task=validate_task,
    # ``--agent released:file.py:generate``: an agent written for the released CLI.
    extra={"agent_adapters": {PREFIX: released_agent_spec}},
)
