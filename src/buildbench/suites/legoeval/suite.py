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
    ProtocolSpec,
    Suite,
    Task,
    mean_metrics,
)
from buildbench.harness.suite import RunChoice

from . import agents
from .degrade import degraded
from .env import check_geometry, make_env
from .options import LegoEvalOptions
from .outcome import LegoEvalOutcome
from .prompts import PROMPT_FILES
from .protocols import evaluate
from .score import failure_metrics, score
from .task_records import check_task_record

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


def check_run(choice: RunChoice) -> None:
    """Refuse, once before the run folder exists, what would fail every episode: objects drawn and
    measured as meshes (``-o geometry=mesh``) on a machine with no asset folder.

    (Rules among the options alone, such as ``plans=reference`` needing ``constraints=given``,
    are :class:`~.options.LegoEvalOptions`'s validators.)
    """
    if not isinstance(choice.options, LegoEvalOptions):
        raise TypeError(f"legoeval check_run: expected LegoEvalOptions, got {type(choice.options).__name__}")
    check_geometry(choice.options.geometry)


def _default(name: str) -> object:
    """The declared default of option ``name`` (for descriptions that mention it)."""
    return LegoEvalOptions.model_fields[name].default


suite = Suite(
    name="legoeval",
    description="Judge 3D houses against fine-grained instructions with 21 tools (LEGO-Eval); scored "
                "against labels as the paper's Table 1.",
    load_tasks=load_tasks,
    make_env=make_env,
    score=score,
    outcome_type=LegoEvalOutcome,
    check_run=check_run,
    headline=("holistic_correct", "partial_accuracy"),
    units={"holistic_correct": "0/1", "partial_accuracy": "share of constraints, 0-1"},
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
        "vlm-judge": AgentSpec("vlm-judge", agents.vlm_judge,
                               f"VLM-as-a-judge on 5 views, majority of {_default('samples_per_judgment')} samples",
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
    protocols={"evaluate": ProtocolSpec("evaluate", evaluate, "tool calls until a verdict is submitted "
                                        f"(-o max_steps=N, default {_default('max_steps')})")},
    default_agent="deterministic",
    default_protocol="evaluate",
    cli="buildbench.suites.legoeval.cli:cli",
    options=LegoEvalOptions,
    prompts=PROMPT_FILES,
    validate_task=check_task_record,
)
