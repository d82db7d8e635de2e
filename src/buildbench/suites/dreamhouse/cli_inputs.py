"""What ``dreamhouse validate``, ``render`` and ``report`` accept: a structure file, or what
``generate`` wrote; a stored run of this suite.

* a structure JSON (ours, or the released submission ``{"members": [...]}``);
* a dataset folder (with ``manifest.json``), or one of its shards
  (``structures-00000.parquet`` / ``.jsonl``), from which ``--task ID`` picks houses (all of
  them when no id is given).

Every house comes with its facade skin when the source has one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buildbench.harness.errors import ConfigError
from buildbench.inputs import check_regular_file, iter_lines
from buildbench.jsonio import parse_json

from .model import Structure

#: Shard suffixes ``generate`` writes.
SHARD_SUFFIXES = (".parquet", ".jsonl")


@dataclass(frozen=True)
class House:
    """One frame to check or draw: its label, the frame and the skin (None from a plain file)."""

    label: str
    frame: Structure
    skin: Structure | None = None


def is_dataset(path: Path) -> bool:
    """Whether ``path`` is a dataset folder or shard rather than one structure file."""
    return path.is_dir() or path.suffix in SHARD_SUFFIXES


def load_houses(path: str | Path, task_ids: Sequence[str] = ()) -> list[House]:
    """The houses at ``path``: one for a structure file; the named (or all) ones of a dataset.

    Raises:
        ConfigError: For an unreadable source, a structure file given task ids, or an id the
            dataset does not hold.
        StructureFormatError: For a malformed structure file.
    """
    from .model import load_structure

    p = Path(path)
    if not is_dataset(p):
        if task_ids:
            raise ConfigError(f"{p} is one structure file; --task picks houses from a dataset folder or shard")
        frame = load_structure(p)
        return [House(str(frame.meta.get("task_id", "")), frame)]
    wanted = set(task_ids)
    found = [House(h.task_id, h.structure, h.skin) for h in _stored(p) if not wanted or h.task_id in wanted]
    missing = sorted(wanted - {h.label for h in found})
    if missing:
        raise ConfigError(f"{p} holds no house {missing[0]!r}")
    if not found:
        raise ConfigError(f"{p} holds no house")
    return found


def _stored(path: Path) -> Iterator[Any]:
    from .generate import read_dataset
    from .generate.dataset import record_house

    if path.is_dir():
        yield from read_dataset(path)
        return
    try:
        if path.suffix == ".jsonl":
            for number, line in iter_lines(path):
                if line.strip():
                    where = f"{path}:{number}"
                    yield record_house(_record(_row(line, where), where), where)
            return
        import pyarrow.parquet as pq

        check_regular_file(path, limit_name="input_file_bytes")
        for k, row in enumerate(pq.read_table(path).to_pylist()):
            yield record_house(_record(row, f"{path} row {k}"), f"{path} row {k}")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path} is not a dreamhouse dataset shard: {exc}") from None


def _row(line: str, where: str) -> Any:
    try:
        return parse_json(line)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: not JSON ({exc.msg})") from None


def _record(row: Any, where: str) -> dict[str, Any]:
    if not isinstance(row, dict) or "task_id" not in row or "names" not in row:
        raise ConfigError(f"{where}: not a dataset record (written by `dreamhouse generate`)")
    return row


def require_dreamhouse_run(run_dir: Path) -> None:
    """Refuse a folder that is not a stored dreamhouse run: its episodes would fill Table 1
    with another suite's numbers.

    Raises:
        ConfigError: For a folder without run.sqlite, or a run of another suite.
    """
    from buildbench.harness import Store

    if not (run_dir / "run.sqlite").is_file():
        raise ConfigError(f"{run_dir}: not a buildbench run (no run.sqlite)")
    with Store(run_dir, create=False) as store:
        suite = store.manifest().get("config", {}).get("suite")
    if suite != "dreamhouse":
        raise ConfigError(f"{run_dir} is a {suite} run, not dreamhouse (see `buildbench report {run_dir}`)")
