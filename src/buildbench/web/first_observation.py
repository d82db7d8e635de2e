"""The images of an episode's first observation (e.g. DreamHouse's five target views).

Rebuilt by :mod:`buildbench.harness.first_observation`, as ``buildbench export --format sft``
does.
"""

from __future__ import annotations

import base64
from typing import Any

from buildbench.harness.first_observation import first_observation, png_bytes
from buildbench.harness.task import Task

#: Name of the ``i``-th first-observation image, as the SFT export names it.
IMAGE_NAME = "reset_view{}.png"
DATA_URL_PREFIX = "data:image/png;base64,"


def first_images(suite_name: str, options: dict[str, Any], task: Task, seed: int) -> list[bytes]:
    """PNG bytes of each image the env shows with its first observation of ``task``.

    Raises:
        Exception: Whatever the suite raises while building or resetting its env.
    """
    return [png_bytes(image) for image in first_observation(suite_name, options, task, seed).images]


def image_entries(images: list[bytes]) -> list[dict[str, str]]:
    """The images as the page shows them: a name and a ``data:`` URL (no file to serve)."""
    return [{"path": IMAGE_NAME.format(i), "url": DATA_URL_PREFIX + base64.b64encode(png).decode("ascii")}
            for i, png in enumerate(images)]


def entry_png(entry: dict[str, str]) -> bytes | None:
    """The PNG bytes of an entry made by :func:`image_entries`, or None for any other URL."""
    url = entry.get("url") or ""
    if not url.startswith(DATA_URL_PREFIX):
        return None
    return base64.b64decode(url[len(DATA_URL_PREFIX):])
