"""Rendering a dataset's houses (``generate --render``): both conditions per house as PNG files,
with the record of which renderer drew them.

``<dataset>/renders/<task_id>/{frame,facade}_<view>.png`` and ``<dataset>/renders/made_by.json``
(``{"renderer": "raster", "made_by": "raster v1"}``, see :mod:`.views_made_by`), written after
every house is drawn; a folder whose record is missing or names another renderer holds views
of unknown origin.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from buildbench.harness.errors import ConfigError
from buildbench.parallel import PROCESS, Backend, map_ordered

from .model import Structure
from .views import DEFAULT_RENDERER, check_renderer, house_views
from .views_basis import VIEW_NAMES
from .views_made_by import RENDERS_RECORD, made_by
from .views_png import png_bytes, save_views


def render_house(structure: Structure, skin: Structure, out_dir: str | Path,
                 renderer: str = DEFAULT_RENDERER) -> list[Path]:
    """Render a generated house under both conditions into ``out_dir`` as
    ``frame_<view>.png`` and ``facade_<view>.png`` (each condition framed on its own bounds)."""
    paths = []
    # Encoded at once, so drawn into reused buffers.
    for condition, images in house_views(structure, skin, renderer, scratch=True).items():
        paths += save_views(images, out_dir, f"{condition}_")
    return paths


def render_dataset(dataset_dir: str | Path, workers: int = 2, limit: int | None = None,
                   backend: Backend = PROCESS, renderer: str = DEFAULT_RENDERER) -> int:
    """Render every house of a dataset folder (``generate.write_dataset``) into
    ``<dataset_dir>/renders/<task_id>/{frame,facade}_<view>.png`` and record ``renderer``'s
    stamp in ``renders/made_by.json``.

    Workers are ``forkserver`` processes (a forked GL context cannot render; the rasterizer
    would not mind), or Ray tasks (``gl`` renders on each node's GPU where EGL finds one, with
    llvmpipe otherwise, and the record then names this machine's driver, so use ``raster``
    there), fed a few houses at a time so memory stays flat over a 26,543-structure dataset.

    The record is removed first and written once every house is drawn; with ``limit`` it is
    written only when the folder held no views drawn otherwise (a record never covers a PNG
    another renderer drew).

    Args:
        dataset_dir: Folder with the dataset manifest.
        workers: Render processes; 1 renders in this process.
        limit: Render only the first ``limit`` houses.
        backend: Where to render (``workers`` applies to the process pool).
        renderer: ``raster`` (default), ``gl`` or ``cycles``.

    Returns:
        The number of houses rendered.

    Raises:
        ConfigError: When the folder holds no readable dataset or cannot be written, or for an
            unknown renderer.
    """
    from .generate import read_dataset

    check_renderer(renderer)
    root = Path(dataset_dir)
    stamp = made_by(renderer)
    record = root / "renders" / RENDERS_RECORD
    # Views another renderer drew may stay beside ours when only the first houses are drawn.
    clean = _recorded(record) == stamp or not _has_views(record.parent)
    houses = itertools.islice(read_dataset(root), limit)
    jobs = ((h.task_id, h.structure, h.skin, renderer) for h in houses)
    count = 0
    try:
        record.unlink(missing_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot write renders to {record.parent}: {exc.strerror or exc}") from exc
    for task_id, pngs in map_ordered(_house_pngs, jobs, workers=workers, backend=backend,
                                     start_method="forkserver", in_flight=None if backend.is_ray else 4 * workers):
        _write_pngs(root / "renders" / task_id, pngs)
        count += 1
    if limit is None or count < limit or clean:  # every house drawn, or nothing else there
        _write_record(record, renderer, stamp)
    return count


def _recorded(record: Path) -> str | None:
    """The stamp a renders folder records; ``None`` when there is none or it cannot be read."""
    try:
        value = json.loads(record.read_text()).get("made_by")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def _has_views(renders: Path) -> bool:
    return renders.is_dir() and any(renders.glob("*/*.png"))


def _write_record(record: Path, renderer: str, stamp: str) -> None:
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({"renderer": renderer, "made_by": stamp}, sort_keys=True) + "\n")
    except OSError as exc:
        raise ConfigError(f"cannot write renders to {record.parent}: {exc.strerror or exc}") from exc


def _house_pngs(job: tuple[str, Structure, Structure, str]) -> tuple[str, dict[str, bytes]]:
    """One house's views under both conditions as PNG bytes by file name; the caller writes
    them, so a worker on another machine needs no access to the dataset folder."""
    task_id, frame, skin, renderer = job
    pngs = {}
    for condition, images in house_views(frame, skin, renderer, scratch=True).items():
        pngs.update({f"{condition}_{name}.png": png_bytes(img) for name, img in zip(VIEW_NAMES, images, strict=True)})
    return task_id, pngs


def _write_pngs(out: Path, pngs: dict[str, bytes]) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, data in pngs.items():
            (out / name).write_bytes(data)
    except OSError as exc:
        raise ConfigError(f"cannot write renders to {out}: {exc.strerror or exc}") from exc
