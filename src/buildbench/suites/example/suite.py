"""Registration of the tower suite."""

from __future__ import annotations

from buildbench.harness import AgentSpec, ProtocolSpec, Suite
from buildbench.harness.task_files import require_fields

from . import agents
from .env import PROMPTS, make_env
from .generate import load_tasks
from .options import ExampleOptions
from .outcome import TowerOutcome
from .protocols import one_shot, refine
from .score import failure_metrics, score

suite = Suite(
    name="example",
    description="Stack blocks into a tower of a target height (harness walkthrough).",
    load_tasks=load_tasks,
    make_env=make_env,
    score=score,
    headline=("passed", "height_ratio", "blocks"),
    units={"passed": "0/1", "height_ratio": "ratio", "blocks": "count"},
    failure_metrics=failure_metrics,
    agents={
        "reference": AgentSpec("reference", agents.reference, "a column of equal blocks reaching the target"),
        "short": AgentSpec("short", agents.short, "negative control: stops at half the height"),
        "floating": AgentSpec("floating", agents.floating, "negative control: blocks hover 5 cm apart"),
        "repairing": AgentSpec("repairing", agents.repairing, "fails first, repairs from feedback"),
        "slow-reference": AgentSpec("slow-reference", agents.reference,
                                    "reference that waits -o delay_s=… per action (runner tests)", kind="io"),
        "llm": AgentSpec("llm", agents.llm, "a chat model answering with JSON", needs_model=True, kind="io"),
    },
    protocols={
        "one-shot": ProtocolSpec("one-shot", one_shot, "one submission"),
        "refine": ProtocolSpec("refine", refine, "up to -o max_steps=N submissions with feedback"),
    },
    default_protocol="refine",
    options=ExampleOptions,
    outcome_type=TowerOutcome,
    prompts=PROMPTS,
    validate_task=require_fields(inputs={"target_height_m": "number>0", "lot_half_width_m": "number>0",
                                         "max_blocks": "integer>=1"}, target={"target_height_m": "number>0"}),
)
