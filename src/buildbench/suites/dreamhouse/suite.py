"""Registration of the DreamHouse suite (import string ``buildbench.suites.dreamhouse.suite:suite``)."""

from __future__ import annotations

from buildbench.harness import AgentSpec, OptionSpec, ProtocolSpec, Suite, Task
from buildbench.harness.degrade import DEGRADE_OPTION
from buildbench.harness.option_model import OptionsArg
from buildbench.harness.prompts import PROMPTS_OPTION

from . import agents
from .degrade import DEFAULT_MODE, MODES, degraded
from .env import make_env
from .figures import figures
from .prompts import ACTION_FORMATS, PROMPT_FILES
from .protocols import DESCRIPTIONS, DreamHouseProtocol, make_protocol
from .released_agent import PREFIX, released_agent_spec
from .report import summarize
from .score import failure_metrics, score
from .tasks import SPLITS, load_tasks, validate_task
from .views import RENDERERS


def _protocol(name: str) -> ProtocolSpec:
    def factory(task: Task, options: OptionsArg) -> DreamHouseProtocol:
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
    task_type="complexity",
    figures=figures,
    failure_metrics=failure_metrics,
    summarize=summarize,
    splits=SPLITS,
    default_agent="oracle",
    default_protocol="planner-atomic",
    cli="buildbench.suites.dreamhouse.cli:cli",
    options=(
        OptionSpec("executor", "str", "fast (our bpy) or blender (real Blender)", ("fast", "blender"),
                   default="fast"),
        OptionSpec("profile", "str", "validator profile", ("paper", "released"), default="paper"),
        OptionSpec("condition", "str", "which target views are shown", ("frame", "facade"), default="frame"),
        OptionSpec("action_format", "str", "what the prompt teaches", tuple(ACTION_FORMATS), default="python"),
        OptionSpec("isolation", "str", "sandbox backend of the executor", ("auto", "bwrap", "process"),
                   default="auto"),
        OptionSpec("images", "str", "show the five target views", ("on", "off"), default="on"),
        OptionSpec("renderer", "str", "gl (fast) or cycles (Blender Cycles, as the paper)", RENDERERS,
                   default="gl"),
        OptionSpec("global_retries", "int", "Table 6 budget override", minimum=0, maximum=1000,
                   unset="the protocol's Table 6 value"),
        OptionSpec("max_actions", "int", "Table 6 budget override", minimum=0, maximum=100_000,
                   unset="the protocol's Table 6 value"),
        OptionSpec("revisions", "int", "Table 6 budget override (iterative refinement)", minimum=0, maximum=1000,
                   unset="the protocol's Table 6 value"),
        OptionSpec("tau_retry", "float", "Table 6 retry threshold", minimum=0.0, maximum=1.0,
                   unset="the protocol's Table 6 value"),
        OptionSpec("require_visual", "bool", "the visual-retry gate below tau_retry (as the paper)", default=True),
        PROMPTS_OPTION,
        DEGRADE_OPTION,
        OptionSpec("degrade_mode", "str", "what the degraded agent corrupts: members (drop/move/rotate) or "
                   "shift (the whole frame, so it still passes and S/T respond)", MODES, default=DEFAULT_MODE),
    ),
    prompts=PROMPT_FILES,
    # Checks the released fields too; a task without a target frame (a released pack) is allowed.
    validate_task=validate_task,
    # ``--agent released:file.py:generate``: an agent written for the released CLI.
    extra={"agent_adapters": {PREFIX: released_agent_spec}},
)
