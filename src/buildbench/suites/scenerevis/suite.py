"""Registration of the SceneReVis suite (entry point ``buildbench.suites.scenerevis.suite:suite``)."""

from __future__ import annotations

from buildbench.harness import AgentSpec, OptionSpec, ProtocolSpec, Suite
from buildbench.harness.degrade import DEGRADE_OPTION
from buildbench.harness.prompts import PROMPTS_OPTION
from buildbench.harness.task_files import require_fields

from . import agents
from .agents.llm import MAX_MODEL_LEN, PROMPT_FILES
from .degrade import degraded
from .env import DEFAULT_MAX_TURNS, make_env
from .protocols import diagnose_act
from .report import summarize
from .score import failure_metrics, score
from .tasks import SPLITS, load_tasks

suite = Suite(
    name="scenerevis",
    description="Lay out a room turn by turn (diagnose and act); scored on collisions, out-of-bounds and more.",
    load_tasks=load_tasks,
    make_env=make_env,
    score=score,
    headline=("valid_placement", "collision_rate", "oob_rate", "voxel_loss_m3", "Avg"),
    task_type="room_type",
    failure_metrics=failure_metrics,
    summarize=summarize,
    splits=SPLITS,
    agents={
        "diagnose": AgentSpec("diagnose", agents.diagnose,
                              "scripted: repairs reported conflicts, adds core furniture at free wall spots"),
        "one-pass": AgentSpec("one-pass", agents.one_pass, "scripted: every object in one turn, no repair"),
        "random": AgentSpec("random", agents.random_placement, "scripted: the same objects at random spots"),
        "oracle": AgentSpec("oracle", agents.oracle, "replays the recorded chain a task carries"),
        "degraded": AgentSpec("degraded", degraded, "calibration: the oracle, then -o degrade=FRACTION of the "
                              "final scene's objects moved, turned or scaled (seeded)"),
        "llm": AgentSpec("llm", agents.llm, "a chat model in the paper's text protocol", needs_model=True,
                         kind="io"),
    },
    protocols={"diagnose-act": ProtocolSpec("diagnose-act", diagnose_act,
                                            "create the room, then diagnose and edit until terminate or budget")},
    default_agent="diagnose",
    default_protocol="diagnose-act",
    cli="buildbench.suites.scenerevis.cli:cli",
    options=(
        OptionSpec("address", "str", "how calls name objects: unique ids (ours) or jids (released)", ("id", "jid"),
                   default="id"),
        OptionSpec("max_turns", "int", "replies per episode, turn 0 included", minimum=2, maximum=100,
                   default=DEFAULT_MAX_TURNS),
        OptionSpec("render", "bool", "attach the merged top + diagonal image", default=True),
        OptionSpec("feedback", "bool", "append the physics hint to observations", default=True),
        OptionSpec("retrieve", "bool", "fill jids of added objects by retrieval", default=True),
        OptionSpec("retrieved_size", "bool", "replace an added object's size by its retrieved size", default=False),
        OptionSpec("geometry", "str", "object shapes of the physics (collisions, out-of-bounds, voxels, reward, "
                   "score): exact boxes, our procedural furniture, or the real asset meshes (needs an asset "
                   "folder); the released mode (address=jid) keeps the release's boxes",
                   ("box", "procedural", "mesh"), default="box"),
        OptionSpec("optimize", "bool", "run the rule-based physics repair after every edit", default=False),
        OptionSpec("judge", "str", "reward judge: 'rule' or a model spec (e.g. vllm:qwen@http://host/v1)",
                   default="rule"),
        OptionSpec("eval_judge", "str", "evaluation judge of Ra/Spa/Ac: 'rule' (not comparable with the paper), "
                   "'none', or a model spec (e.g. openai:gpt-5)", default="rule"),
        OptionSpec("eval_judge_record", "str", "JSONL file the model eval judge answers from or records to",
                   unset="no file"),
        OptionSpec("vlm_feedback", "str", "layout critique model appended to the feedback each turn, as the "
                   "released --enable-vlm-feedback: 'none' or a model spec (e.g. openai:gpt-5)", default="none"),
        OptionSpec("vlm_feedback_record", "str", "JSONL file the layout critique model answers from or records to",
                   unset="no file"),
        OptionSpec("max_model_len", "int", "context window the llm agent truncates history to, tokens",
                   minimum=1024, maximum=10_000_000, default=MAX_MODEL_LEN),
        PROMPTS_OPTION,
        DEGRADE_OPTION,
    ),
    prompts=PROMPT_FILES,
    validate_task=require_fields(inputs={"instruction": "string"}),
)
