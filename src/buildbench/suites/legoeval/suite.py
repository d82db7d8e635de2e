"""Registration of the LEGO-Eval suite (entry point ``buildbench.suites.legoeval.suite:suite``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cache
from typing import Any

from buildbench.harness import (
    AgentSpec,
    ConfigError,
    Episode,
    OptionSpec,
    ProtocolSpec,
    Suite,
    Task,
    mean_metrics,
)
from buildbench.harness.degrade import DEGRADE_OPTION
from buildbench.harness.prompts import PROMPTS_OPTION
from buildbench.harness.task_files import require_fields

from . import agents
from .degrade import degraded
from .env import make_env
from .prompts import PROMPT_FILES
from .protocols import DEFAULT_MAX_STEPS, evaluate
from .score import failure_metrics, score_episode

#: Aligned/misaligned pairs per split: the paper's 130 + 130 design, and a small sample.
SPLIT_PAIRS = {"default": 130, "demo": 6}
#: Where the ``legobench`` split reads the released LEGO-Bench (``full_data.json`` + ``data_{i}/``).
LEGOBENCH_ENV = "BUILDBENCH_LEGOBENCH_DIR"


def load_tasks(split: str, seed: int) -> list[Task]:
    """The generated meta-benchmark (``2 * pairs`` tasks: each aligned scene, then its twin),
    or ``legobench``: the released LEGO-Bench from the folder in ``$BUILDBENCH_LEGOBENCH_DIR``."""
    if split == "legobench":
        return _released()
    if split not in SPLIT_PAIRS:
        raise ConfigError(f"legoeval has no split {split!r} (splits: {', '.join(SPLITS)})")
    return list(_generated(SPLIT_PAIRS[split], seed))


def _released() -> list[Task]:
    from .legobench import LegoBenchError, load_legobench

    root = os.environ.get(LEGOBENCH_ENV)
    if not root:
        raise ConfigError(f"split legobench reads the released LEGO-Bench: set {LEGOBENCH_ENV} to the folder "
                          "holding full_data.json and data_{i}/ (Hugging Face LEGO-Eval/LEGO_Bench)")
    try:
        return load_legobench(root)
    except (LegoBenchError, OSError) as exc:
        raise ConfigError(f"{LEGOBENCH_ENV}={root}: {exc}") from None


SPLITS = (*SPLIT_PAIRS, "legobench")


@cache
def _generated(n_pairs: int, seed: int) -> tuple[Task, ...]:
    # Generation takes seconds for the 260 tasks and is deterministic; runs of several
    # agents in one process (the demo, tests) share it.
    from .tasks import generated_tasks

    return tuple(generated_tasks(n_pairs, seed))


def summarize(episodes: Sequence[Episode]) -> dict[str, Any]:
    """The harness means plus the paper's tables (Table 1 agreement, per-type agreement,
    Table 3 success rates) for each agent in the run, beside the published numbers."""
    from .report import run_tables

    out = mean_metrics(episodes)
    groups: dict[str, list[Episode]] = {}
    for ep in episodes:
        groups.setdefault(ep.agent, []).append(ep)
    out["tables"] = run_tables(groups)
    return out


suite = Suite(
    name="legoeval",
    description="Judge 3D houses against fine-grained instructions with 21 tools (LEGO-Eval); scored "
                "against labels as the paper's Table 1.",
    load_tasks=load_tasks,
    make_env=make_env,
    score=score_episode,
    headline=("holistic_correct", "partial_accuracy"),
    task_type="bucket",
    failure_metrics=failure_metrics,
    summarize=summarize,
    splits=SPLITS,
    agents={
        "llm": AgentSpec("llm", agents.llm, "the LEGO-Eval pipeline: plan, select arguments, run tools, validate",
                         needs_model=True, kind="io"),
        "tool-agent": AgentSpec("tool-agent", agents.tool_agent,
                                "a chat model calling the 21 tools itself, then submit_verdicts",
                                needs_model=True, kind="io"),
        "deterministic": AgentSpec("deterministic", agents.deterministic,
                                   "typed programs from the template grammar, decided by geometry"),
        "translate": AgentSpec("translate", agents.translate,
                               "deterministic, with a chat model writing programs the grammar cannot read",
                               needs_model=True, kind="io"),
        "vlm-judge": AgentSpec("vlm-judge", agents.vlm_judge, "VLM-as-a-judge on 5 views, majority of 3 samples",
                               needs_model=True, kind="io"),
        "sceneeval": AgentSpec("sceneeval", agents.sceneeval,
                               "SceneEval-style fixed criteria; unmeasurable constraints fail (Full)"),
        "sceneeval-measurable": AgentSpec("sceneeval-measurable", agents.sceneeval_measurable,
                                          "SceneEval-style fixed criteria on the measurable constraints only"),
        "always-valid": AgentSpec("always-valid", agents.always_valid, "constant predictor: valid"),
        "always-invalid": AgentSpec("always-invalid", agents.always_invalid, "constant predictor: invalid"),
        "degraded": AgentSpec("degraded", degraded, "calibration: deterministic with -o degrade=FRACTION of its "
                              "constraint and holistic verdicts flipped (seeded)"),
    },
    protocols={"evaluate": ProtocolSpec("evaluate", evaluate,
                                        "tool calls until a verdict is submitted (-o max_steps=N, default 40)")},
    default_agent="deterministic",
    default_protocol="evaluate",
    cli="buildbench.suites.legoeval.cli:cli",
    options=(
        OptionSpec("max_steps", "int", "tool calls plus the verdict per episode", minimum=1, maximum=10_000,
                   default=DEFAULT_MAX_STEPS),
        OptionSpec("render", "bool", "environment tools render images (false: text-only tools)", default=True),
        OptionSpec("wall_midpoint_positions", "bool",
                   "tools answer as the original does (door/window positions at the wall midpoint, file values "
                   "unrounded, its footprint corners)", default=False),
        OptionSpec("per_constraint", "bool",
                   "vlm-judge also judges each constraint (Table 1's partial level), not only the whole "
                   "instruction", default=True),
        OptionSpec("constraints", "str", "constraints given with the task, or identified by the model",
                   ("given", "identify"), default="given"),
        OptionSpec("disable", "set", "tool groups to disable", ("textual", "environment", "multimodal"),
                   default=""),
        OptionSpec("plans", "str", "tool plans by the model, or the task's reference plans (only arguments "
                   "are then chosen by the model, Table 7)", ("model", "reference"), default="model"),
        OptionSpec("image_px", "int", "side of rendered tool images, pixels", minimum=32, maximum=2048,
                   default=336),
        OptionSpec("geometry", "str", "how rendered tool and judge images draw objects: boxes, procedural "
                   "part-based furniture, or asset meshes (3D-FUTURE/Objaverse where available); also what "
                   "the checker's object distances, 'under' and 'overlaps' measure (boxes in the "
                   "wall_midpoint_positions compatible mode)",
                   ("box", "procedural", "mesh"), default="box"),
        OptionSpec("samples_per_judgment", "int", "VLM-judge self-consistency samples", minimum=1, maximum=100,
                   default=3),
        PROMPTS_OPTION,
        DEGRADE_OPTION,
    ),
    prompts=PROMPT_FILES,
    validate_task=require_fields(inputs={"instruction": "string", "constraints": "array", "scene": "object"},
                                 target={"valid": "boolean", "labels": "array"}),
)
