"""Registration of the BuildArena suite (registry import string ``buildbench.suites.buildarena:buildarena_suite``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from buildbench.harness import AgentSpec, ConfigError, OptionSpec, Protocol, ProtocolSpec, Suite, Task
from buildbench.harness.degrade import DEGRADE_OPTION
from buildbench.harness.option_model import OptionsArg
from buildbench.harness.prompts import PROMPTS_OPTION
from buildbench.harness.task_files import require_fields

from . import agents, protocols
from .agents import PROMPT_FILES
from .degrade import degraded
from .env import make_env
from .figures import figures
from .physics.config import config_for
from .physics.profile import DEFAULT_PROFILE
from .report import summarize
from .score import failure_metrics, score_episode
from .tasks import TASKS, get_task, load_levels
from .variants import VARIED_LEVELS, generate, parse

SUITE = "buildarena"
ProtocolFactory = Callable[[Task, OptionsArg], Protocol]
DEMO_TASKS = ("transport-1", "support-1", "lift-1")
"""The ``demo`` split: the Lv.1 task of each category."""
VARIANTS = "variants"
VARIANTS_COUNT = 24
"""Tasks in a ``variants`` split without a count: three of each varied level."""
VARIANTS_MAX = 10_000
"""Most tasks one ``variants:SEED:COUNT`` split may ask for."""


def to_task(task_id: str) -> Task:
    """The harness task of a BuildArena task id (one of the nine levels or a variant).

    Raises:
        ValueError: For an unknown or malformed id.
    """
    spec = get_task(task_id)
    metadata: dict[str, Any] = {"category": spec.category, "level": spec.level}
    if spec.id not in TASKS:
        variant = parse(spec.id)
        metadata["variant"] = {"of": variant.base, "params": dict(variant.params)}
    return Task(
        id=spec.id,
        suite=SUITE,
        inputs={"text": spec.text, "category": spec.category, "level": spec.level,
                "max_substructures": spec.max_substructures},
        target={"duration_s": spec.duration_s},
        metadata=metadata,
    )


def variants_split(split: str, seed: int) -> tuple[int, int] | None:
    """``(seed, count)`` of a ``variants[:SEED[:COUNT]]`` split (the run's seed and 24 by default), None for
    another split.

    Raises:
        ValueError: A ``variants:…`` split whose seed or count is not a whole number, or a count outside
            1–10,000.
    """
    head, *rest = split.split(":")
    if head != VARIANTS:
        return None
    fields = [seed, VARIANTS_COUNT]
    if len(rest) > 2 or not all(r.isdigit() for r in rest):
        raise ValueError(f"split {split!r}: write variants, variants:SEED or variants:SEED:COUNT (whole numbers)")
    fields[: len(rest)] = [int(r) for r in rest]
    if not 1 <= fields[1] <= VARIANTS_MAX:
        raise ValueError(f"split {split!r}: count {fields[1]} is outside 1–{VARIANTS_MAX}")
    return fields[0], fields[1]


def load_tasks(split: str, seed: int) -> list[Task]:
    """``default``: the nine task levels; ``demo``: the three Lv.1 tasks; ``variants[:SEED[:COUNT]]``:
    seeded variants (``variants.generate``; SEED defaults to the run's seed, COUNT to 24); a task or
    variant id: that task alone.

    The nine levels are fixed: the seed does not change them (it seeds the episodes).

    Raises:
        ConfigError: A malformed ``variants:…`` split or variant id (one line saying what is wrong).
    """
    try:
        drawn = variants_split(split, seed)
        if drawn is not None:
            return [to_task(v.id) for v in generate(*drawn)]
        ids = {"default": list(TASKS), "demo": list(DEMO_TASKS)}.get(split, [split])
        return [to_task(i) for i in ids]
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


class Splits(tuple[str, ...]):
    """The named splits; membership also admits what looks like ``variants:…`` or a variant id (a varied
    level, ``_``, parameters), which cannot all be listed: the runner checks a run's split with ``in``,
    and ``load_tasks`` then says precisely what is wrong with a malformed one."""

    def __contains__(self, split: object) -> bool:
        if super().__contains__(split):
            return True
        return isinstance(split, str) and (split.startswith(f"{VARIANTS}:") or split.split("_")[0] in VARIED_LEVELS)


def check_options(options: OptionsArg) -> None:
    """Refuse run options that would only fail once an env is built (a bad ``-o levels=FILE`` or
    ``-o physics=NAME|FILE``).

    Raises:
        ValueError: One line naming the file and the problem (and, for a physics profile, the field).
    """
    if options.get("levels"):
        load_levels(options["levels"])
    if options.get("physics"):
        config_for(options["physics"])


def _checked(factory: ProtocolFactory) -> ProtocolFactory:
    """``factory`` that checks the options first: the runner calls each protocol factory once with the
    run's options before the first episode and refuses the run on a ValueError."""
    @functools.wraps(factory)
    def make(task: Task, options: OptionsArg) -> Protocol:
        check_options(options)
        return factory(task, options)

    return make


def _spec(name: str, factory: ProtocolFactory, description: str) -> ProtocolSpec:
    return ProtocolSpec(name, _checked(factory), description)


suite = Suite(
    name=SUITE,
    description="Build vehicles, bridges and rockets from Besiege-style blocks; judged by MuJoCo simulation.",
    load_tasks=load_tasks,
    make_env=make_env,
    score=score_episode,
    headline=("passed", "indicator", "parts", "invalid_action_rate"),
    task_type="category",
    figures=figures,
    failure_metrics=failure_metrics,
    summarize=summarize,
    agents={
        "reference": AgentSpec("reference", agents.reference, "scripted reference design of each task level"),
        "negative": AgentSpec("negative", agents.negative, "negative-control design that must fail"),
        "degraded": AgentSpec("degraded", degraded, "calibration: the reference design with -o degrade=FRACTION "
                              "of its calls dropped, moved or given the wrong block (seeded)"),
        "llm": AgentSpec("llm", agents.llm, "a chat model playing every workflow role", needs_model=True,
                         kind="io"),
    },
    protocols={
        "workflow": _spec("workflow", protocols.workflow,
                          "Planner, Drafter-Reviewer, Builder-Guidance, Refine, Assemble, Controller"),
        "closed-loop": _spec("closed-loop", protocols.closed_loop,
                             "the workflow plus simulator feedback rounds (-o rounds=5)"),
        "guidance-builder": _spec("guidance-builder", protocols.guidance_builder, "ablation: Guidance and Builder"),
        "builder-only": _spec("builder-only", protocols.builder_only, "ablation: the Builder alone"),
    },
    splits=Splits(("default", "demo", VARIANTS, *TASKS)),
    default_agent="reference",
    default_protocol="workflow",
    cli="buildbench.suites.buildarena.cli:cli",
    options=(
        OptionSpec("sim_duration_s", "float", "shorten every simulation, seconds", minimum=0.01, maximum=3600.0,
                   unset="each task's own duration"),
        OptionSpec("max_calls", "int", "library calls per episode", minimum=1, maximum=100_000, unset="no limit"),
        OptionSpec("max_shift", "float-or-none", "largest move of a block, metres, or none (no limit)",
                   minimum=0.0, maximum=1000.0, default=0.5),
        OptionSpec("control_trials", "int", "controller generations allowed (3 in the paper)", minimum=1,
                   maximum=100, default=3),
        OptionSpec("control", "str", "the negative control design to build", unset="the one made for the task"),
        OptionSpec("draft_turns", "int", "Drafter-Reviewer turns", minimum=1, maximum=10_000, default=50),
        OptionSpec("build_turns", "int", "Builder-Guidance turns", minimum=1, maximum=10_000, default=300),
        OptionSpec("max_substructures", "int", "substructures the Planner may ask for", minimum=1, maximum=100,
                   default=3),
        OptionSpec("rounds", "int", "closed-loop simulator feedback rounds", minimum=1, maximum=100, default=1),
        OptionSpec("top_p", "float-or-none", "nucleus sampling of the llm team (as in the paper), or none",
                   minimum=0.01, maximum=1.0, default=0.7),
        OptionSpec("levels", "str", "the released levels.yaml (all nine tasks, checked before the run): "
                   "its task texts replace ours", unset="our task texts"),
        OptionSpec("profile", "str", "library profile: default (our fixes) or released (the original's answers)",
                   choices=("default", "released"), default="default"),
        OptionSpec("physics", "str", "physics profile: a shipped name (besiege-1) or a profile .toml file "
                   "(checked before the run; its name and hash are stored with every episode)",
                   default=DEFAULT_PROFILE),
        PROMPTS_OPTION,
        DEGRADE_OPTION,
    ),
    prompts=PROMPT_FILES,
    validate_task=require_fields(inputs={"text": "string", "category": "string", "level": "integer"}),
)
