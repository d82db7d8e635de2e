"""The ``-o`` options of the SceneReVis suite, declared once: one frozen, typed object per run.

The env (:mod:`.env`), the agents (:mod:`.agents`, :mod:`.degrade`) and the diagnose-and-act
protocol (:mod:`.protocols`) read its fields; nothing parses an option again. Rules among the
options alone are the class's validators (one ``error:`` line before a run starts); rules that
involve the agent, the split or the machine are :func:`.suite.check_run`'s.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ValidationInfo, field_validator, model_validator

from buildbench.harness.degrade import DEGRADE_OPTION
from buildbench.harness.option_model import ModelOptions, option, shared_option
from buildbench.harness.prompts import PROMPTS_OPTION

#: Replies allowed per episode, counting turn 0 (RL used 7; inference 10 or 15 iterations).
DEFAULT_MAX_TURNS = 10
#: The model agent's context window, tokens (the release's inference setting).
MAX_MODEL_LEN = 40960
#: ``eval_judge`` / ``vlm_feedback`` values that name no model.
RULE, NONE = "rule", "none"


class SceneReVisOptions(ModelOptions):
    """The options of one SceneReVis run (the common model options first, then these).

    Beyond each option's help: ``address=jid`` is the released behaviour (objects named by asset
    id); ``retrieved_size`` is what the release does at inference, off here because our retrieved
    sizes are category-level; ``optimize`` is Algorithm 2 (seeded), as the release's
    ``--enable-physics-optimization``; ``judge`` and ``eval_judge`` default to the deterministic
    rule judges, which are labelled not comparable with the paper.
    """

    address: Literal["id", "jid"] = option(
        "str", "how calls name objects: unique ids (ours) or jids (released)", default="id")
    max_turns: int = option("int", "replies per episode, turn 0 included", minimum=2, maximum=100,
                            default=DEFAULT_MAX_TURNS)
    render: bool = option("bool", "attach the merged top + diagonal image", default=True)
    feedback: bool = option("bool", "append the physics hint to observations", default=True)
    retrieve: bool = option("bool", "fill jids of added objects by retrieval", default=True)
    retrieved_size: bool = option("bool", "replace an added object's size by its retrieved size", default=False)
    geometry: Literal["box", "procedural", "mesh"] = option(
        "str", "object shapes of the physics (collisions, out-of-bounds, voxels, reward, score): exact boxes, "
        "our procedural furniture, or the real asset meshes (needs an asset folder); the released mode "
        "(address=jid) keeps the release's boxes", default="box")
    optimize: bool = option("bool", "run the rule-based physics repair after every edit", default=False)
    judge: str = option("str", "reward judge: 'rule' or a model spec (e.g. vllm:qwen@http://host/v1)",
                        default=RULE)
    eval_judge: str = option("str", "evaluation judge of Ra/Spa/Ac: 'rule' (not comparable with the paper), "
                             "'none', or a model spec (e.g. openai:gpt-5)", default=RULE)
    eval_judge_record: str | None = option("str", "JSONL file the model eval judge answers from or records to",
                                           unset="no file", path="output")
    vlm_feedback: str = option("str", "layout critique model appended to the feedback each turn, as the "
                               "released --enable-vlm-feedback: 'none' or a model spec (e.g. openai:gpt-5)",
                               default=NONE)
    vlm_feedback_record: str | None = option(
        "str", "JSONL file the layout critique model answers from or records to", unset="no file",
        path="output")
    max_model_len: int = option("int", "context window the llm agent truncates history to, tokens",
                                minimum=1024, maximum=10_000_000, default=MAX_MODEL_LEN, unit="tokens")
    prompts: str | None = shared_option(PROMPTS_OPTION)
    degrade: float = shared_option(DEGRADE_OPTION)

    @field_validator("judge", "eval_judge", "vlm_feedback", mode="after")
    @classmethod
    def _blank_is_default(cls, value: str, info: ValidationInfo) -> str:
        # A blank judge (``-o eval_judge=``) means the default, not a model named "".
        default = cls.model_fields[str(info.field_name)].default
        return value.strip() or str(default)

    @model_validator(mode="after")
    def _judges_are_models(self) -> SceneReVisOptions:
        if self.vlm_feedback == RULE:
            raise ValueError("option vlm_feedback: 'rule' is not a model; give a model spec (e.g. openai:gpt-5) "
                             "or 'none'")
        if self.judge == NONE:  # the reward always has a judge
            raise ValueError("option judge: 'none' is not a judge; give 'rule' or a model spec (e.g. openai:gpt-5)")
        for name in ("judge", "eval_judge", "vlm_feedback"):
            spec = getattr(self, name)
            if uses_model(spec):
                from buildbench.llm import parse_spec

                try:
                    parse_spec(spec)
                except ValueError as exc:  # a malformed spec; an unknown provider fails at make_model
                    raise ValueError(f"option {name}: {exc}") from None
        return self


def uses_model(spec: str) -> bool:
    """Whether a judge option (``eval_judge``, ``vlm_feedback``) names a chat model."""
    return spec not in (RULE, NONE)
