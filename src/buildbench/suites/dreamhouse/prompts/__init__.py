"""DreamHouse prompts (our own words) carrying what the paper's Prompt 0 carries.

Part 1 (task and injected context: lot size, stories, roof type, complexity; image order)
is ``task.md``; Part 2 (coordinate system, per-view axes, how to read the views, section
patterns) and Part 3 (taxonomy, naming rule, phase dependencies, story elevations,
typical sizes, step classes) are ``rules.md``; Part 4 (the plan schema and its checks) is
``plan.md``. ``code_*.md`` explain each action format; ``request_*.md`` and ``retry*.md``
are the protocol turns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

from buildbench.harness import Task
from buildbench.harness.prompts import PromptFiles

from ..options import ActionFormat

#: Action formats the prompts can describe (``-o action_format``).
ACTION_FORMATS: tuple[str, ...] = get_args(ActionFormat)

_CONDITION_TEXT = {
    "frame": "bare timber frame of the target house",
    "facade": "finished house with its exterior cladding, which hides the frame you must infer",
}


#: The replaceable prompt texts (``-o prompts=DIR``): every ``.md`` file here, ``{name}`` placeholders filled by ``PromptFiles.render``.
PROMPT_FILES = PromptFiles(Path(__file__).resolve().parent, fields=True)


def template(name: str) -> str:
    """The text of ``prompts/<name>.md`` (the run's ``-o prompts=DIR`` file when it has one)."""
    return PROMPT_FILES.read(f"{name}.md").strip()


def render(name: str, **values: Any) -> str:
    """``prompts/<name>.md`` with ``values`` filled in."""
    return PROMPT_FILES.render(f"{name}.md", **values)


def system_prompt() -> str:
    """The system message of model-backed agents."""
    return template("system")


def task_prompt(task: Task, *, condition: str, n_images: int, action_format: str) -> str:
    """The first observation: context (Part 1), rules (Parts 2–3), plan schema (Part 4), action format."""
    inp = task.inputs
    lot, foot = inp["lot_size"], inp["footprint"]
    views = (
        render("views_present", condition_text=_CONDITION_TEXT[condition]) if n_images else template("views_absent")
    )
    head = render(
        "task",
        lot_width=f"{lot['width']:.2f}", lot_depth=f"{lot['depth']:.2f}", lot_area=f"{lot['area']:.2f}",
        stories=inp["stories"], roof_type=inp["roof_type"], complexity=inp["complexity"], style=inp["style"],
        footprint_x=f"{foot['x']:.2f}", footprint_y=f"{foot['y']:.2f}", wings=inp["wings"], views=views,
    )  # fmt: skip
    code = render(f"code_{action_format}", collection=inp["collection"])
    return "\n\n".join([head, template("rules"), render("plan"), code])


def retry_text(feedback: str, *, attempt: int, left: int) -> str:
    """Feedback after a failed attempt, with the retries left."""
    return render("retry", feedback=feedback, attempt=attempt, left=left, plural="y" if left == 1 else "ies")


def plan_retry_text(problems: list[str], *, left: int) -> str:
    """Why a plan was rejected, with the retries left."""
    listed = "\n".join(f"- {p}" for p in problems)
    return render("plan_retry", problems=listed, left=left, plural="y" if left == 1 else "ies")
