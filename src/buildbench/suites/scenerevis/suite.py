"""Registration of the SceneReVis suite (entry point ``buildbench.suites.scenerevis.suite:suite``)."""

from __future__ import annotations

from buildbench.harness import AgentSpec, ProtocolSpec, Suite
from buildbench.harness.errors import ConfigError
from buildbench.harness.suite import RunChoice

from . import agents
from .agents.llm import PROMPT_FILES
from .degrade import degraded
from .env import check_geometry, make_env
from .options import SceneReVisOptions
from .outcome import SceneReVisOutcome
from .protocols import diagnose_act
from .report import summarize
from .score import failure_metrics, score
from .tasks import CHAINLESS_SPLITS, SPLITS, check_task_record, load_tasks

#: The agents that replay the recorded chain a task carries (``target.chain``).
CHAIN_AGENTS = ("oracle", "degraded")


def check_run(choice: RunChoice) -> None:
    """Refuse, once before the run, what would fail every episode: a chain-replaying agent on a
    split whose tasks carry no chain or under ``address=jid``, and ``geometry=mesh`` without an
    asset folder."""
    chainless = choice.split in CHAINLESS_SPLITS or (choice.split == "default" and choice.tasks is None)
    if choice.agent in CHAIN_AGENTS and chainless:
        raise ConfigError(f"agent {choice.agent!r} replays the recorded chain a task carries, and the tasks of "
                          f"split {choice.split!r} carry none: use --split chains (or --tasks with chains made by "
                          "`buildbench scenerevis reverse`)")
    options: SceneReVisOptions = choice.options
    if choice.agent in CHAIN_AGENTS and options.address == "jid":
        # Chains name objects by instance id; a jid cannot name every such object faithfully (an
        # object added or replaced earlier in the same reply has no asset yet, copies share one).
        raise ConfigError(f"agent {choice.agent!r} replays chains that name objects by instance id (obj_N), which "
                          "-o address=jid cannot name (objects added or replaced in the same reply have no jid "
                          "yet; copies share one): use -o address=id")
    check_geometry(options.geometry)


suite = Suite(
    name="scenerevis",
    description="Lay out a room turn by turn (diagnose and act); scored on collisions, out-of-bounds and more.",
    load_tasks=load_tasks,
    make_env=make_env,
    score=score,
    headline=("valid_placement", "collision_rate", "oob_rate", "voxel_loss_m3", "Avg"),
    units={"valid_placement": "%", "collision_rate": "%", "oob_rate": "%", "voxel_loss_m3": "m³",
           "Avg": "judge score, 1-10"},
    task_type="room_type",
    failure_metrics=failure_metrics,
    summarize=summarize,
    splits=SPLITS,
    agents={
        "diagnose": AgentSpec("diagnose", agents.diagnose,
                              "scripted: repairs reported conflicts, adds core furniture at free wall spots"),
        "one-pass": AgentSpec("one-pass", agents.one_pass, "scripted: every object in one turn, no repair"),
        "random": AgentSpec("random", agents.random_placement, "scripted: the same objects at random spots"),
        "oracle": AgentSpec("oracle", agents.oracle,
                            "replays the recorded chain a task carries"),
        "degraded": AgentSpec("degraded", degraded,
                              "calibration: the oracle, then -o degrade=FRACTION of the final scene's objects "
                              "moved, turned or scaled (seeded)"),
        "llm": AgentSpec("llm", agents.llm,
                         "a chat model in the paper's text protocol", needs_model=True, kind="io"),
    },
    protocols={"diagnose-act": ProtocolSpec("diagnose-act", diagnose_act,
                                            "create the room, then diagnose and edit until terminate or budget")},
    default_agent="diagnose",
    default_protocol="diagnose-act",
    cli="buildbench.suites.scenerevis.cli:cli",
    options=SceneReVisOptions,
    outcome_type=SceneReVisOutcome,
    check_run=check_run,
    prompts=PROMPT_FILES,
    validate_task=check_task_record,
)
