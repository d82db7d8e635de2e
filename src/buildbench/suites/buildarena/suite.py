"""Registration of the BuildArena suite (entry point ``buildbench.suites.buildarena.suite:suite``)."""

from __future__ import annotations

from typing import Any

from buildbench.harness import AgentSpec, ConfigError, ProtocolSpec, Suite, Task
from buildbench.harness.suite import RunChoice

from . import agents, protocols
from .agents import PROMPT_FILES
from .degrade import degraded
from .env import BuildArenaEnv
from .figures import figures
from .options import BuildArenaOptions
from .outcome import BuildArenaOutcome
from .physics.config import config_for
from .report import summarize
from .score import failure_metrics, score_episode
from .tasks import TASKS, get_task, load_levels, validate_task
from .variants import VARIED_LEVELS, generate, parse

SUITE = "buildarena"
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


def check_run(choice: RunChoice) -> None:
    """Refuse, before the run, what an env or agent would only fail on once built: a bad ``-o levels=FILE``,
    ``-o physics=NAME|FILE`` or ``-o control=NAME``.

    Raises:
        ConfigError: One line naming the option, the file and the problem (for a physics profile, the field).
    """
    options = choice.options
    assert isinstance(options, BuildArenaOptions)  # the runner parses with this suite's options class
    from . import designs

    if options.control and options.control not in designs.NEGATIVE:
        # Otherwise every episode would end as an unscored error naming it.
        raise ConfigError(f"option control={options.control[:60]!r}: no such negative control; controls: "
                          f"{', '.join(designs.NEGATIVE)}")
    try:
        if options.levels:
            load_levels(options.levels)
        config_for(options.physics)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


suite = Suite(
    name=SUITE,
    description="Build vehicles, bridges and rockets from Besiege-style blocks; judged by MuJoCo simulation.",
    load_tasks=load_tasks,
    make_env=BuildArenaEnv,
    score=score_episode,
    headline=("passed", "indicator", "parts", "invalid_action_rate"),
    units={"passed": "0/1", "indicator": "per task: displacement, load, TWR or height (a mean over "
           "categories mixes them: Table 2 has it per task)", "parts": "blocks",
           "invalid_action_rate": "share of calls, 0-1"},
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
        "workflow": ProtocolSpec("workflow", protocols.workflow,
                                 "Planner, Drafter-Reviewer, Builder-Guidance, Refine, Assemble, Controller"),
        "closed-loop": ProtocolSpec("closed-loop", protocols.closed_loop,
                                    "the workflow plus simulator feedback rounds (-o rounds=5)"),
        "guidance-builder": ProtocolSpec("guidance-builder", protocols.guidance_builder,
                                         "ablation: Guidance and Builder"),
        "builder-only": ProtocolSpec("builder-only", protocols.builder_only, "ablation: the Builder alone"),
    },
    splits=Splits(("default", "demo", VARIANTS, *TASKS)),
    default_agent="reference",
    default_protocol="workflow",
    cli="buildbench.suites.buildarena.cli:cli",
    options=BuildArenaOptions,
    outcome_type=BuildArenaOutcome,
    check_run=check_run,
    prompts=PROMPT_FILES,
    validate_task=validate_task,
)
