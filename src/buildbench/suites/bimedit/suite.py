"""Registration of the BIM-Edit suite (import string ``buildbench.suites.bimedit.suite:suite``)."""

from __future__ import annotations

from buildbench.harness import AgentSpec, ProtocolSpec, Suite
from buildbench.harness.errors import ConfigError
from buildbench.harness.suite import RunChoice

from . import agents
from .degrade import degraded
from .env import PROMPT_FILES, make_env
from .options import BimEditOptions
from .outcome import BimEditOutcome
from .protocols import tool_loop
from .report import summarize
from .score import failure_metrics, score
from .tasks import SPLITS, check_task_record, load_harness_tasks, read_native_task_file

#: The scripted agents that edit through ``execute_ifc_code`` (all but the model and the no-op).
CODE_AGENTS = ("oracle", "degraded", "door-without-opening", "wall-keeps-openings", "uncontained-wall")


def check_run(choice: RunChoice) -> None:
    """Refuse, once before the run, a scripted agent that edits with code when the env offers the
    structured tools instead: every call it makes would be an unknown tool, every episode a zero."""
    options: BimEditOptions = choice.options
    if options.action_format == "structured" and choice.agent in CODE_AGENTS:
        raise ConfigError(f"agent {choice.agent!r} edits through execute_ifc_code, which -o action_format=structured "
                          "does not offer: use action_format=code, or the llm or noop agent")

suite = Suite(
    name="bimedit",
    description="Edit IFC building models with IfcOpenShell code; scored on geometry, semantics, topology.",
    load_tasks=load_harness_tasks,
    make_env=make_env,
    score=score,
    headline=("solved", "final", "geometry", "semantics", "topology"),
    units={"solved": "0/1", "final": "0-1", "geometry": "0-1", "semantics": "0-1", "topology": "0-1"},
    task_type="operation",
    failure_metrics=failure_metrics,
    summarize=summarize,
    splits=SPLITS,
    agents={
        "llm": AgentSpec("llm", agents.llm, "a chat model with the execute_ifc_code tool (the paper's agent)",
                         needs_model=True, kind="io"),
        "oracle": AgentSpec("oracle", agents.oracle, "runs the task's reference code through the tool"),
        "noop": AgentSpec("noop", agents.noop, "answers at once and commits nothing"),
        "degraded": AgentSpec("degraded", degraded, "calibration: the reference edit with -o degrade=FRACTION "
                              "of its parts wrong (targets not deleted; moved, resized or renamed; seeded)"),
        "door-without-opening": AgentSpec("door-without-opening", agents.door_without_opening,
                                          "flawed: moves a door/window but not its opening (filling updates)"),
        "wall-keeps-openings": AgentSpec("wall-keeps-openings", agents.wall_keeps_openings,
                                         "flawed: deletes a wall but leaves its openings (wall deletes)"),
        "uncontained-wall": AgentSpec("uncontained-wall", agents.uncontained_wall,
                                      "flawed: creates a wall outside its storey (wall creates)"),
    },
    protocols={"tool-loop": ProtocolSpec("tool-loop", tool_loop,
                                         "the paper's loop: 20 tool calls, 120 s each, one inference retry")},
    default_agent="oracle",
    default_protocol="tool-loop",
    cli="buildbench.suites.bimedit.cli:cli",
    extra={"read_task_file": read_native_task_file},
    options=BimEditOptions,
    outcome_type=BimEditOutcome,
    check_run=check_run,
    prompts=PROMPT_FILES,
    validate_task=check_task_record,
    task_paths=("inputs.ifc_path", "target.ground_truth_ifc", "target.input_ifc"),
)
