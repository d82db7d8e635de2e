"""DreamHouse's ``-o`` options: one frozen, typed class, parsed once per run.

Each option is declared once, here (choices, default, bounds, help); ``buildbench suites``, the
JSON Schema and ``-o`` parsing are read from this class, and the env, agent and protocol
factories take the parsed object and read its fields. The Table 6 budget overrides
(``step_retries``, ``global_retries``, ``max_actions``, ``revisions``, ``tau_retry``, and the
common ``max_tokens`` and ``history``) are unset unless given: each protocol then keeps its own
Table 6 value (:func:`.protocols.budget_from_options`).

The common ``max_retries`` is what it is in every suite, the retries of a failed model request;
until ``step_retries`` had its own name it set the protocol's retries as well, so a run that gives
``max_retries`` without ``step_retries`` is refused with the new name rather than quietly getting
Table 6's retries where it asked for its own.
"""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from buildbench.harness.degrade import DEGRADE_OPTION
from buildbench.harness.option_model import ModelOptions, option
from buildbench.harness.prompts import PROMPTS_OPTION

from .views_basis import Condition

Executor = Literal["fast", "blender"]
Profile = Literal["paper", "released"]
#: What the prompt teaches (every format is accepted in every episode).
ActionFormat = Literal["python", "json", "tools"]
Isolation = Literal["auto", "bwrap", "process"]
OnOff = Literal["on", "off"]
#: The renderer of the target views, the visual feedback and the final S (``views.RENDERERS``).
Renderer = Literal["raster", "gl", "cycles"]
#: What the ``degraded`` agent corrupts (:mod:`.degrade`).
DegradeMode = Literal["members", "shift"]

_TABLE6 = "the protocol's Table 6 value"


class DreamHouseOptions(ModelOptions):
    """Options of the DreamHouse suite, beside the model-agent options every suite shares."""

    executor: Executor = option("str", "fast (our bpy) or blender (real Blender)", default="fast")
    profile: Profile = option("str", "validator profile", default="paper")
    condition: Condition = option("str", "which target views are shown", default="frame")
    action_format: ActionFormat = option("str", "what the prompt teaches", default="python")
    isolation: Isolation = option("str", "sandbox backend of the executor", default="auto")
    images: OnOff = option("str", "show the five target views", default="on")
    renderer: Renderer = option("str", "raster (ours, identical images on every machine), gl (OpenGL) or cycles "
                                 "(Blender Cycles, as the paper)", default="raster")
    step_retries: int | None = option("int", "Table 6 budget override: retries after a failed attempt (the plan, a "
                                      "whole frame, a Managed step)", minimum=0, maximum=1000, unset=_TABLE6)
    global_retries: int | None = option("int", "Table 6 budget override", minimum=0, maximum=1000, unset=_TABLE6)
    max_actions: int | None = option("int", "Table 6 budget override", minimum=0, maximum=100_000, unset=_TABLE6)
    revisions: int | None = option("int", "Table 6 budget override (iterative refinement)", minimum=0,
                                   maximum=1000, unset=_TABLE6)
    tau_retry: float | None = option("float", "Table 6 retry threshold", minimum=0.0, maximum=1.0, unset=_TABLE6)
    require_visual: bool = option("bool", "the visual-retry gate below tau_retry (as the paper)", default=True)
    prompts: str | None = option("str", PROMPTS_OPTION.help, path=PROMPTS_OPTION.path)
    degrade: float = option("float", DEGRADE_OPTION.help, default=DEGRADE_OPTION.default,
                            minimum=DEGRADE_OPTION.minimum, maximum=DEGRADE_OPTION.maximum)
    degrade_mode: DegradeMode = option("str", "what the degraded agent corrupts: members (drop/move/rotate) or "
                                       "shift (the whole frame, so it still passes and S/T respond)",
                                       default="members")

    @model_validator(mode="after")
    def _max_retries_is_not_step_retries(self) -> DreamHouseOptions:
        if self.max_retries is not None and "step_retries" not in self.model_fields_set:
            raise ValueError(
                "option max_retries no longer sets the protocol's retries after a failed attempt: give "
                "step_retries=N for those; max_retries (retries of a failed model request) is taken only beside "
                "step_retries")
        return self
