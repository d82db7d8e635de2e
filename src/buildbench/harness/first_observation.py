"""An episode's first observation, rebuilt: the runner stores the observations that follow a
step, not the one the env shows at reset (DreamHouse's five target views, for one), so the
SFT export and the viewer rebuild it the same way — a fresh env of the run's suite and
options, reset on the task with the episode's seed."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from .env import Observation
from .prompts import prompt_folder
from .suite import get_suite
from .task import Task


def first_observation(suite_name: str, options: Mapping[str, Any], task: Task, seed: int) -> Observation:
    """The observation the env of ``suite_name`` shows when reset on ``task`` with ``seed``.

    Raises:
        Exception: Whatever the suite raises while building or resetting its env.
    """
    suite = get_suite(suite_name)
    parsed = suite.parse_options(options)  # a run's given options, parsed as the run parsed them
    env = None
    try:
        with prompt_folder(getattr(parsed, "prompts", None)):
            env = suite.make_env(task, parsed)
            observation, _ = env.reset(task, seed=seed)
    finally:
        if env is not None:
            env.close()
    return observation


def png_bytes(image: Any) -> bytes:
    """An observation image as PNG bytes (PNG bytes pass through; arrays are (H, W, C) uint8)."""
    if isinstance(image, bytes):
        return image
    import numpy as np
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image)).save(buf, format="PNG")
    return buf.getvalue()
