"""Export a stored run as JSONL (full episode records), Parquet (one flat row per episode) or
SFT data (chat JSONL and a Hugging Face dataset; see `buildbench.harness.sft`)."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .sft import SftExport, export_sft
from .store import Store

__all__ = ["SftExport", "export_jsonl", "export_parquet", "export_sft", "flat_rows"]


@contextmanager
def _replacing(path: str | Path) -> Iterator[Path]:
    """A temporary file beside ``path`` that replaces it once written whole.

    A failed write (a full disk) leaves ``path`` as it was: pyarrow deletes the file it fails
    to write, and that was the user's earlier export, or a device node such as ``/dev/full``.
    ``path`` itself must be absent or a regular file.

    Raises:
        ConfigError: ``path`` is something else, or writing failed (naming ``path`` and why).
    """
    target = Path(path)
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise ConfigError(f"--out {target}: exists and is not a regular file; give a file to write")
    temporary: Path | None = None
    # the temporary file is made inside the try: a folder that refuses it (read-only, immutable)
    # is reported naming the output, not the hidden name of a file that never existed
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
        os.close(fd)
        temporary = Path(name)
        # mkstemp's file is private (0600); the export gets the mode the file had, or a new file's.
        os.chmod(temporary, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
        yield temporary
        os.replace(temporary, target)
    except OSError as exc:
        raise ConfigError(f"--out {target}: cannot write it ({exc.strerror or exc})") from None
    finally:
        if temporary is not None:
            temporary.unlink(missing_ok=True)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def export_jsonl(store: Store, path: str | Path) -> int:
    """Write every episode record (with steps) as one JSON line. Returns the count."""
    n = 0
    with _replacing(path) as partial, open(partial, "w", encoding="utf-8") as fh:
        for episode in store.episodes():
            fh.write(json.dumps(episode.to_dict(), default=str) + "\n")
            n += 1
    return n


def flat_rows(store: Store) -> list[dict[str, Any]]:
    """Episode rows with metrics and usage spread into ``metric.*`` / ``usage.*`` columns."""
    rows = []
    for row in store.rows():
        flat = {k: row[k] for k in ("task_id", "sample", "seed", "status", "duration_s", "finished_at")}
        for key, value in row["metrics"].items():
            flat[f"metric.{key}"] = value
        for key, value in row["usage"].items():
            flat[f"usage.{key}"] = value
        flat["artifacts"] = json.dumps(row["artifacts"])
        rows.append(flat)
    return rows


def export_parquet(store: Store, path: str | Path) -> int:
    """Write one flat row per episode to a Parquet file. Returns the count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = flat_rows(store)
    columns = sorted({k for r in rows for k in r})
    table = pa.table({c: [r.get(c) for r in rows] for c in columns}) if rows else pa.table({})
    with _replacing(path) as partial:
        pq.write_table(table, partial)
    return len(rows)
