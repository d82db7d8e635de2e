"""``buildbench view --static OUT``: the viewer as plain files to share or host anywhere.

The layout mirrors the server: ``index.html`` and ``static/`` (the bundle), ``files/R/…``
(the images the trajectories show, copied from run R's folder), ``first/R/ep-N/`` (the images
of episode N's first observation, rebuilt at export) and ``data/`` with every
answer the page needs. Data files are small scripts (``__bbData(key, value)``) rather than
JSON, so the export also works opened straight from disk, where browsers refuse ``fetch``
of local files. The page pages, sorts and filters the episode rows itself in this mode.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from .data import ViewerData, to_json_bytes
from .first_observation import entry_png
from .runs import ViewerInputError
from .server import STATIC_ROOT, bundle_ready


def _write_data(out: Path, key: str, value: Any) -> None:
    path = out / "data" / f"{key}.js"
    path.parent.mkdir(parents=True, exist_ok=True)
    # "</" is escaped so that no data can end a script element if the file were ever inlined.
    body = to_json_bytes(value).replace(b"</", b"<\\/")
    path.write_bytes(b"window.__bbData(" + json.dumps(key).encode() + b"," + body + b");\n")


def write_static(data: ViewerData, out: str | Path) -> dict[str, int]:
    """Write the viewer for ``data``'s runs into ``out`` (created; must be empty if it exists).

    Returns counts of what was written (runs, episodes, images, artefacts).

    Raises:
        ViewerInputError: ``out`` exists and is not an empty folder, or the bundle is missing.
    """
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ViewerInputError(f"--static {out}: exists and is not an empty folder")
    if not bundle_ready(STATIC_ROOT):
        raise ViewerInputError(f"the viewer bundle is missing from {STATIC_ROOT}; run `make web`")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(STATIC_ROOT, out / "static")
    html = (STATIC_ROOT / "index.html").read_text(encoding="utf-8")
    (out / "index.html").write_text(html.replace('content="server"', 'content="static"'), encoding="utf-8")
    counts = {"runs": len(data.runs), "episodes": 0, "images": 0, "artefacts": 0}
    _write_data(out, "runs", data.runs_info())
    _write_data(out, "compare", data.compare())
    for run in data.runs:
        rows = run.all_rows()
        for n, row in enumerate(rows):
            row["file"] = n
            episode = data.episode(run.index, row["task_id"], row["sample"])
            counts["images"] += _copy_images(run, episode, out)
            counts["images"] += _write_first_images(f"first/{run.index}/ep-{n}", episode, out)
            _write_data(out, f"run-{run.index}/ep-{n}", episode)
            _write_data(out, f"run-{run.index}/art-{n}", data.artefact(run.index, row["task_id"], row["sample"]))
            counts["artefacts"] += 1
        counts["episodes"] += len(rows)
        _write_data(out, f"run-{run.index}/rows", rows)
        _write_data(out, f"run-{run.index}/metrics", data.metric_keys(run.index))
    return counts


def _copy_images(run: Any, episode: dict[str, Any], out: Path) -> int:
    copied = 0
    for step in episode["steps"]:
        for image in step["images"]:
            if not image["url"]:
                continue
            source = run.resolve_file(image["url"].split("/", 2)[2])
            target = out / image["url"]
            if source is None or target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            copied += 1
    return copied


def _write_first_images(folder: str, episode: dict[str, Any], out: Path) -> int:
    """Write the episode's first-observation images as files under ``out/folder`` and point their
    entries there, so the data files stay small."""
    written = 0
    for entry in episode.get("first_images") or []:
        png = entry_png(entry)
        if png is None:
            continue
        target = out / folder / entry["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(png)
        entry["url"] = f"{folder}/{entry['path']}"
        written += 1
    return written
