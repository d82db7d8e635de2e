"""Registration of the BIM-Edit suite (import string ``buildbench.suites.bimedit.suite:suite``)."""

from __future__ import annotations

from buildbench.harness import AgentSpec, OptionSpec, ProtocolSpec, Suite
from buildbench.harness.degrade import DEGRADE_OPTION
from buildbench.harness.prompts import PROMPTS_OPTION
from buildbench.harness.task_files import require_fields

from . import agents
from .degrade import degraded
from .env import PROMPT_FILES, make_env
from .protocols import tool_loop
from .report import summarize
from .score import failure_metrics, score
from .tasks import SPLITS, load_harness_tasks, read_native_task_file

suite = Suite(
    name="bimedit",
    description="Edit IFC building models with IfcOpenShell code; scored on geometry, semantics, topology.",
    load_tasks=load_harness_tasks,
    make_env=make_env,
    score=score,
    headline=("solved", "final", "geometry", "semantics", "topology"),
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
    options=(
        OptionSpec("max_calls", "int", "tool calls per episode (20 in the paper)", minimum=1, maximum=10_000,
                   default=20),
        OptionSpec("call_timeout_s", "float", "seconds per tool call (120 in the paper)", minimum=0.001,
                   maximum=86_400.0, default=120.0),
        OptionSpec("memory_mb", "int", "sandbox memory per call, MiB", minimum=64, maximum=65_536, default=4096),
        OptionSpec("disk_mb", "int", "work-folder quota of the sandbox, MiB", minimum=1, maximum=262_144,
                   default=2048),
        OptionSpec("max_output_chars", "int", "tool output shown to the agent", minimum=0, maximum=10_000_000,
                   default=20_000),
        OptionSpec("action_format", "str", "how the agent edits", ("code", "structured"), default="code"),
        OptionSpec("isolation", "str", "sandbox backend", ("auto", "bwrap", "process"), default="auto"),
        OptionSpec("reload_per_call", "bool", "reload the model before every call", default=False),
        OptionSpec("strict", "bool", "score in strict mode (collateral damage counts)", default=False),
        OptionSpec("retries", "int", "inference retries after an API error", minimum=0, maximum=100, default=1),
        OptionSpec("retry_delay_s", "float", "seconds between inference retries", minimum=0.0, maximum=3600.0,
                   default=30.0),
        PROMPTS_OPTION,
        DEGRADE_OPTION,
    ),
    prompts=PROMPT_FILES,
    validate_task=require_fields(inputs={"instruction": "string", "ifc_path": "string"}, target={"ground_truth_ifc": "string"}),
)

#: The entry-point name before every suite registered as ``suite:suite``; plugins, scripts and
#: installs whose metadata still names it keep working.
bimedit_suite = suite
