"""BIM-Edit's ``-o`` options, declared once: default, bounds and help of each (spec 1.4 for the
paper's values). The harness parses them into :class:`BimEditOptions` before a run starts and hands
that object to the env, agent and protocol factories."""

from __future__ import annotations

from typing import Literal

from buildbench.harness.degrade import DEGRADE_OPTION
from buildbench.harness.option_model import ModelOptions, option, shared_option
from buildbench.harness.prompts import PROMPTS_OPTION
from buildbench.sandbox import Isolation

#: How the agent edits: ``execute_ifc_code``, or the structured tool set (:mod:`.structured`).
ActionFormat = Literal["code", "structured"]


class BimEditOptions(ModelOptions):
    """The options of a BIM-Edit run (beside the model agent's common ones); frozen."""

    max_calls: int = option("int", "tool calls per episode (20 in the paper)", minimum=1, maximum=10_000,
                            default=20)
    call_timeout_s: float = option("float", "seconds per tool call (120 in the paper)", minimum=0.001,
                                   maximum=86_400.0, default=120.0, unit="s")
    memory_mb: int = option("int", "sandbox memory per call, MiB", minimum=64, maximum=65_536, default=4096,
                            unit="MiB")
    disk_mb: int = option("int", "work-folder quota of the sandbox, MiB", minimum=1, maximum=262_144,
                          default=2048, unit="MiB")
    max_output_chars: int = option("int", "tool output shown to the agent", minimum=0, maximum=10_000_000,
                                   default=20_000, unit="characters")
    action_format: ActionFormat = option("str", "how the agent edits", choices=("code", "structured"),
                                         default="code")
    isolation: Isolation = option("str", "sandbox backend", choices=("auto", "bwrap", "process"), default="auto")
    reload_per_call: bool = option("bool", "reload the model before every call", default=False)
    strict: bool = option("bool", "score in strict mode (collateral damage counts)", default=False)
    retries: int = option("int", "inference retries after an API error", minimum=0, maximum=100, default=1)
    retry_delay_s: float = option("float", "seconds between inference retries", minimum=0.0, maximum=3600.0,
                                  default=30.0, unit="s")
    prompts: str | None = shared_option(PROMPTS_OPTION)
    degrade: float = shared_option(DEGRADE_OPTION)
