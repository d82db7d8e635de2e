"""The tower suite's ``-o`` options: one frozen, typed class, parsed once per run.

Each field is declared once, here (default, bounds, help); ``buildbench suites``, the JSON Schema
and ``-o`` parsing are read from it, and the env, agent and protocol factories take the parsed
object and read its fields.
"""

from __future__ import annotations

from buildbench.harness.option_model import ModelOptions, option
from buildbench.harness.prompts import PROMPTS_OPTION


class ExampleOptions(ModelOptions):
    """Options of the example (tower) suite, beside the model-agent options every suite shares."""

    #: Submissions the ``refine`` protocol allows.
    max_steps: int = option("int", "submissions allowed by the refine protocol", default=3, minimum=1, maximum=1000)
    #: Seconds the ``slow-reference`` agent waits before each action (runner tests).
    delay_s: float = option("float", "seconds slow-reference waits per action", default=0.0, minimum=0.0,
                            maximum=3600.0, unit="s")
    #: A folder of prompt files replacing the suite's own (``buildbench.harness.prompts``).
    prompts: str | None = option("str", PROMPTS_OPTION.help, path=PROMPTS_OPTION.path)
