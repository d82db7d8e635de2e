"""The run options of BuildArena (``-o KEY=VALUE``), declared once: name, type, default, bounds
and help of each. The harness parses a run's options into :class:`BuildArenaOptions` before the
first episode and hands the frozen object to the env, agent and protocol factories, which read
its fields.

``top_p`` is redeclared: the paper's runs sample with top-p 0.7 (App. E.1, Table 5), where the
common option leaves the server's own value.
"""

from __future__ import annotations

from typing import Literal, get_args

from buildbench.harness.degrade import DEGRADE_OPTION
from buildbench.harness.option_model import ModelOptions, option, shared_option
from buildbench.harness.prompts import PROMPTS_OPTION

from .model import Rules
from .physics.profile import DEFAULT_PROFILE

#: The library's behaviour: ``default`` (our fixes) or ``released`` (the original's answers).
LibraryProfile = Literal["default", "released"]


class BuildArenaOptions(ModelOptions):
    """BuildArena's run options, beside those every model agent understands (its top_p defaults to the
    paper's 0.7)."""

    sim_duration_s: float | None = option("float", "shorten every simulation, seconds", minimum=0.01,
                                          maximum=3600.0, unset="each task's own duration", unit="s")
    max_calls: int | None = option("int", "library calls per episode", minimum=1, maximum=100_000,
                                   unset="no limit")
    max_shift: float | None = option("float-or-none", "largest move of a block, metres, or none (no limit)",
                                     minimum=0.0, maximum=1000.0, default=Rules.max_shift, unit="m")
    control_trials: int = option("int", "controller generations allowed (3 in the paper)", minimum=1,
                                 maximum=100, default=3)
    control: str | None = option("str", "the negative control design to build",
                                 unset="the one made for the task")
    draft_turns: int = option("int", "Drafter-Reviewer turns", minimum=1, maximum=10_000, default=50)
    build_turns: int = option("int", "Builder-Guidance turns", minimum=1, maximum=10_000, default=300)
    max_substructures: int = option("int", "substructures the Planner may ask for", minimum=1, maximum=100,
                                    default=3)
    #: The closed-loop protocol plays 5 rounds (paper Table 6) unless the run gives this option.
    rounds: int = option("int", "closed-loop simulator feedback rounds", minimum=1, maximum=100, default=1)
    top_p: float | None = option("float-or-none", "nucleus sampling of the llm team (as in the paper), or none",
                                 minimum=0.01, maximum=1.0, default=0.7)
    levels: str | None = option("str", "the released levels.yaml (all nine tasks, checked before the run): "
                                "its task texts replace ours", unset="our task texts", path="input")
    profile: LibraryProfile = option("str", "library profile: default (our fixes) or released (the original's "
                                     "answers)", default="default", choices=get_args(LibraryProfile))
    physics: str = option("str", "physics profile: a shipped name (besiege-1) or a profile .toml file (checked "
                          "before the run; its name and hash are stored with every episode)",
                          default=DEFAULT_PROFILE, path=".toml")
    prompts: str | None = shared_option(PROMPTS_OPTION)
    degrade: float = shared_option(DEGRADE_OPTION)
