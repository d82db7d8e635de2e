"""Registration of the BuildArena suite (registry import string ``buildbench.suites.buildarena:buildarena_suite``)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from buildbench.harness import AgentSpec, OptionSpec, Protocol, ProtocolSpec, Suite, Task
from buildbench.harness.prompts import PROMPTS_OPTION
from buildbench.harness.task_files import require_fields

from . import agents, protocols
from .agents import PROMPT_FILES
from .env import make_env
from .metrics import score_episode
from .report import summarize
from .tasks import TASKS, load_levels

SUITE = "buildarena"
ProtocolFactory = Callable[[Task, dict[str, Any]], Protocol]
DEMO_TASKS = ("transport-1", "support-1", "lift-1")
"""The ``demo`` split: the Lv.1 task of each category."""


def to_task(task_id: str) -> Task:
    """The harness task of a BuildArena task id."""
    spec = TASKS[task_id]
    return Task(
        id=spec.id,
        suite=SUITE,
        inputs={"text": spec.text, "category": spec.category, "level": spec.level,
                "max_substructures": spec.max_substructures},
        target={"duration_s": spec.duration_s},
        metadata={"category": spec.category, "level": spec.level},
    )


def load_tasks(split: str, seed: int) -> list[Task]:
    """``default``: the nine task levels; ``demo``: the three Lv.1 tasks; a task id: that task alone.

    The tasks are fixed: the seed does not change them (it seeds the episodes).
    """
    ids = {"default": list(TASKS), "demo": list(DEMO_TASKS)}.get(split, [split])
    return [to_task(i) for i in ids]


def check_options(options: dict[str, Any]) -> None:
    """Refuse run options that would only fail once an env is built (a bad ``-o levels=FILE``).

    Raises:
        ValueError: One line naming the file and the problem.
    """
    if options.get("levels"):
        load_levels(options["levels"])


def _checked(factory: ProtocolFactory) -> ProtocolFactory:
    """``factory`` that checks the options first: the runner calls each protocol factory once with the
    run's options before the first episode and refuses the run on a ValueError."""
    @functools.wraps(factory)
    def make(task: Task, options: dict[str, Any]) -> Protocol:
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
    summarize=summarize,
    agents={
        "reference": AgentSpec("reference", agents.reference, "scripted reference design of each task level"),
        "negative": AgentSpec("negative", agents.negative, "negative-control design that must fail"),
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
    splits=("default", "demo", *TASKS),
    default_agent="reference",
    default_protocol="workflow",
    cli="buildbench.suites.buildarena.cli:cli",
    options=(
        OptionSpec("sim_duration_s", "float", "shorten every simulation, seconds", minimum=0.01),
        OptionSpec("max_calls", "int", "library calls per episode", minimum=1),
        OptionSpec("max_shift", "float-or-none", "largest move of a block, or none", minimum=0.0),
        OptionSpec("control_trials", "int", "controller generations allowed (3 in the paper)", minimum=1),
        OptionSpec("control", "str", "the negative control design to build"),
        OptionSpec("draft_turns", "int", "Drafter-Reviewer turns", minimum=1),
        OptionSpec("build_turns", "int", "Builder-Guidance turns", minimum=1),
        OptionSpec("max_substructures", "int", "substructures the Planner may ask for", minimum=1),
        OptionSpec("rounds", "int", "closed-loop simulator feedback rounds", minimum=1),
        OptionSpec("top_p", "float-or-none", "nucleus sampling of the llm team (0.7 as in the paper), or none",
                   minimum=0.01, maximum=1.0),
        OptionSpec("levels", "str", "the released levels.yaml (all nine tasks, checked before the run): "
                   "its task texts replace ours"),
        OptionSpec("profile", "str", "library profile: default (our fixes) or released (the original's answers)",
                   choices=("default", "released")),
        PROMPTS_OPTION,
    ),
    prompts=PROMPT_FILES,
    validate_task=require_fields(inputs={"text": "string", "category": "string", "level": "integer"}),
)
