"""Writing a generated dataset to disk, reading it back, and member-count statistics.

``write_dataset`` is what ``buildbench dreamhouse generate --n N`` calls: a process pool
(2 workers by default) generates chunks of task ids; the parent writes the chunks in
order, so the files are byte-identical for a given ``n`` and seed whatever the timing.
Formats: Parquet (one row per structure; member arrays as list columns) or JSONL (one
JSON object per line, members in our structure JSON form). ``manifest.json`` records the
parameters, the files with their SHA-256, and per-style member-count statistics.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from buildbench.harness.errors import ConfigError
from buildbench.inputs import check_regular_file, iter_lines, read_text
from buildbench.jsonio import parse_json
from buildbench.parallel import PROCESS, Backend, map_ordered

from ..model import Structure
from .api import GENERATOR_VERSION, GeneratedHouse, dataset_task_ids, generate_structure
from .ids import STYLE_CODES, TaskId
from .params import params_from_dict

FORMATS = ("parquet", "jsonl")
#: Structures per output shard / per worker job.
CHUNK = 256
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class CountStats:
    """Member-count distribution of a set of structures.

    Attributes:
        n: Structures counted.
        min: Fewest members.
        mean: Mean members.
        median: Median members.
        max: Most members.
    """

    n: int
    min: int
    mean: float
    median: float
    max: int

    @classmethod
    def of(cls, counts: Iterable[int]) -> CountStats:
        """Statistics of a sequence of member counts (all zeros when empty)."""
        a = np.asarray(list(counts), dtype=np.int64)
        if a.size == 0:
            return cls(0, 0, 0.0, 0.0, 0)
        return cls(int(a.size), int(a.min()), round(float(a.mean()), 1), float(np.median(a)), int(a.max()))


@dataclass(frozen=True)
class CountReport:
    """Member counts overall and per style (paper: 133–1,548, mean 673, median 656)."""

    overall: CountStats
    per_style: dict[str, CountStats]

    def table(self) -> str:
        """A plain-text table, one row per style and a total row."""
        rows = [f"{'style':<6}{'n':>6}{'min':>7}{'mean':>9}{'median':>9}{'max':>7}"]
        for code, st in [*self.per_style.items(), ("all", self.overall)]:
            rows.append(f"{code:<6}{st.n:>6}{st.min:>7}{st.mean:>9.1f}{st.median:>9.1f}{st.max:>7}")
        return "\n".join(rows)


def count_report(counts_by_style: dict[str, list[int]]) -> CountReport:
    """Summarise member counts grouped by style code."""
    everything = [c for v in counts_by_style.values() for c in v]
    per = {
        code: CountStats.of(counts_by_style.get(code, [])) for code in STYLE_CODES if code in counts_by_style
    }
    return CountReport(CountStats.of(everything), per)


def _count_chunk(args: tuple[list[str], int]) -> list[tuple[str, int]]:
    ids, seed = args
    return [(t, len(generate_structure(t, seed).structure)) for t in ids]


def member_count_distribution(n: int, seed: int = 0, workers: int = 2) -> CountReport:
    """Generate an ``n``-structure dataset (style-balanced) and report its member counts."""
    ids = [str(t) for t in dataset_task_ids(n)]
    chunks = [(ids[i : i + CHUNK], seed) for i in range(0, len(ids), CHUNK)]
    by_style: dict[str, list[int]] = {}
    for res in _map(_count_chunk, chunks, workers):
        for tid, count in res:
            by_style.setdefault(TaskId.parse(tid).style, []).append(count)
    return count_report(by_style)


def _map(fn: Any, jobs: list[Any], workers: int, backend: Backend = PROCESS) -> Iterator[Any]:
    """``map`` over a process pool (or Ray), in order, with a few chunks in flight
    (so a 26,543-structure run never holds more than a few chunks in memory)."""
    if not backend.is_ray and len(jobs) <= 1:
        workers = 1
    return map_ordered(fn, jobs, workers=workers, backend=backend)


# -- records ------------------------------------------------------------------------------
#: List columns of numbers (member arrays at stored precision, flattened).
_NUMBER_LISTS = ("sizes_m", "matrices", "skin_sizes_m", "skin_matrices")


def _arrays(s: Structure, as_lists: bool) -> dict[str, Any]:
    sizes, mats = np.round(s.sizes_m, 6).ravel(), np.round(s.matrices[:, :3, :], 6).ravel()
    return {
        "names": list(s.names),
        "sizes_m": sizes.tolist() if as_lists else sizes,
        "matrices": mats.tolist() if as_lists else mats,
    }


def house_record(h: GeneratedHouse, *, as_lists: bool = True) -> dict[str, Any]:
    """One structure as a flat, JSON-able record (frame and skin arrays, annotations, params).

    With ``as_lists=False`` the member arrays (:data:`_NUMBER_LISTS`) stay float64 numpy
    arrays of the same numbers: cheaper to send between processes and to put in a table.
    """
    s = h.structure
    frame = _arrays(s, as_lists)
    skin = _arrays(h.skin, as_lists)
    return {
        "task_id": h.task_id,
        "style": h.params.style,
        "config": h.params.config,
        "roof_type": h.params.roof_type,
        "complexity": h.params.complexity,
        "stories": h.params.stories,
        "n_members": len(s),
        "seed": h.seed,
        "params_json": json.dumps(h.params.to_dict(), sort_keys=True),
        **frame,
        "phases": list(s.phases),
        "sections": list(s.sections),
        "supported_by": [sup[0] if sup else "" for sup in s.supported_by],
        "skin_names": skin["names"],
        "skin_sizes_m": skin["sizes_m"],
        "skin_matrices": skin["matrices"],
    }


def _structure(
    names: list[str],
    sizes: list[float],
    mats: list[float],
    meta: dict[str, Any],
    phases: list[str] | None = None,
    sections: list[str] | None = None,
    supported: list[str] | None = None,
) -> Structure:
    n = len(names)
    m = np.zeros((n, 4, 4))
    m[:, :3, :] = np.asarray(mats, dtype=np.float64).reshape(n, 3, 4)
    m[:, 3, 3] = 1.0
    bears_on: list[tuple[str, ...]] = []
    if supported:
        bears_on = list(zip(supported))  # (name,) each; "" is the ground: no support
        for k in [k for k, x in enumerate(supported) if not x]:
            bears_on[k] = ()
    return Structure(
        tuple(names), np.asarray(sizes, dtype=np.float64).reshape(n, 3), m,
        tuple(phases or ()), tuple(sections or ()), tuple(bears_on), meta=meta,
    )  # fmt: skip


@dataclass(frozen=True)
class StoredHouse:
    """A structure read back from a dataset folder.

    Attributes:
        task_id: Task id.
        params_json: Its :class:`HouseParams` as JSON (see :func:`params_from_dict`).
        structure: The frame.
        skin: The facade panels.
    """

    task_id: str
    params_json: str
    structure: Structure
    skin: Structure

    @property
    def params(self) -> Any:
        """The parameters as :class:`HouseParams`."""
        return params_from_dict(parse_json(self.params_json))


#: Fields of a record read back, with the values per member each member list holds.
_RECORD_TEXT = ("task_id", "style", "roof_type", "complexity", "params_json")
_PER_MEMBER = {"names": 1, "phases": 1, "sections": 1, "supported_by": 1, "sizes_m": 3, "matrices": 12}
_PER_SKIN = {"skin_names": 1, "skin_sizes_m": 3, "skin_matrices": 12}


def _check_record(r: Any, where: str) -> None:
    """Refuse a record that :func:`house_record` did not write, naming the field.

    Raises:
        ConfigError: For a missing field, a list of the wrong length, a name that is no text
            or an entry of a member array that is no finite number (true/false included).
    """
    if not isinstance(r, dict):
        raise ConfigError(f"{where}: a dataset record must be an object, got {type(r).__name__}")
    missing = next((key for key in (*_RECORD_TEXT, *_PER_MEMBER, *_PER_SKIN) if key not in r), None)
    if missing:
        raise ConfigError(f"{where}: missing field {missing!r}")
    for key in _RECORD_TEXT:
        if not isinstance(r.get(key), str):
            raise ConfigError(f"{where}: field {key!r} must be text, got {str(r.get(key))[:40]!r}")
    for per, count_key in ((_PER_MEMBER, "names"), (_PER_SKIN, "skin_names")):
        if not isinstance(r.get(count_key), list | np.ndarray):
            raise ConfigError(f"{where}: field {count_key!r} must be a list")
        n = len(r[count_key])
        for key, width in per.items():
            value = r.get(key)
            if not isinstance(value, list | np.ndarray) or len(value) != width * n:
                got = f"{len(value)} values" if isinstance(value, list | np.ndarray) else type(value).__name__
                raise ConfigError(f"{where}: field {key!r} must hold {width * n} values ({width} for each of "
                                  f"the {n} members), got {got}")
            if width == 1:
                allowed = (str,) if key in ("names", "skin_names", "supported_by") else (str, type(None))
                bad = next((k for k, v in enumerate(value) if not isinstance(v, allowed)), None)
                if bad is not None:
                    raise ConfigError(f"{where}: field {key!r} entry {bad} must be text, got {value[bad]!r}")
            elif isinstance(value, list):
                bad = next((k for k, v in enumerate(value) if type(v) is not float and not _finite_int(v)), None)
                if bad is not None:
                    raise ConfigError(f"{where}: field {key!r} entry {bad} must be a finite number, "
                                      f"got {str(value[bad])[:40]}")


def _finite_int(value: Any) -> bool:
    return type(value) is int and abs(value) < 2**1023


def record_house(r: dict[str, Any], where: str = "dataset record") -> StoredHouse:
    """Rebuild a :class:`StoredHouse` from :func:`house_record` output.

    Raises:
        ConfigError: Naming ``where`` and the field, for a record that is not such output.
    """
    _check_record(r, where)
    meta = {
        "task_id": r["task_id"],
        "style": r["style"],
        "roof_type": r["roof_type"],
        "complexity": r["complexity"],
    }
    frame = _structure(
        r["names"], r["sizes_m"], r["matrices"], meta, r["phases"], r["sections"], r["supported_by"]
    )
    skin = _structure(r["skin_names"], r["skin_sizes_m"], r["skin_matrices"], {**meta, "skin": True})
    return StoredHouse(r["task_id"], r["params_json"], frame, skin)


# -- writing ------------------------------------------------------------------------------
def _chunk_records(args: tuple[list[str], int, bool]) -> list[dict[str, Any]]:
    ids, seed, as_lists = args
    return [house_record(generate_structure(t, seed), as_lists=as_lists) for t in ids]


def _write_shard(path: Path, records: list[dict[str, Any]], fmt: str) -> None:
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in records))
    else:
        pq.write_table(_records_table(records), path, compression="zstd")


def _records_table(records: list[dict[str, Any]]) -> pa.Table:
    """The table ``pa.Table.from_pylist`` makes of the records with their member arrays as
    lists: numpy member arrays become list<double> columns straight from their values."""
    arrays = [k for k in _NUMBER_LISTS if records and isinstance(records[0][k], np.ndarray)]
    if any(sum(len(r[k]) for r in records) == 0 for k in arrays):
        # from_pylist types a column of only empty lists list<null>; keep its table exactly.
        return pa.Table.from_pylist([{k: _plain(v) for k, v in r.items()} for r in records])
    table = pa.Table.from_pylist([{k: v for k, v in r.items() if k not in arrays} for r in records])
    columns = {}
    for k in records[0]:
        if k in arrays:
            ends = np.cumsum([0] + [len(r[k]) for r in records])
            values = np.concatenate([r[k] for r in records]).astype(np.float64, copy=False)
            columns[k] = pa.ListArray.from_arrays(pa.array(ends, pa.int32()), pa.array(values, pa.float64()))
        else:
            columns[k] = table.column(k)
    return pa.table(columns)


def _plain(v: Any) -> Any:
    return v.tolist() if isinstance(v, np.ndarray) else v


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_dataset(
    out_dir: str | Path,
    n: int,
    seed: int = 0,
    *,
    fmt: str = "parquet",
    workers: int = 2,
    task_ids: list[TaskId] | None = None,
    backend: Backend = PROCESS,
) -> dict[str, Any]:
    """Generate ``n`` structures (or the given ``task_ids``) into ``out_dir`` with a manifest.

    Args:
        out_dir: Folder to create or reuse (existing shard files are overwritten).
        n: Dataset size; ids follow :func:`dataset_task_ids` (ignored when ``task_ids`` given).
        seed: Dataset seed.
        fmt: ``parquet`` or ``jsonl``.
        workers: Generator processes (the project's machines have 2 cores).
        task_ids: Explicit ids to generate (e.g. :func:`default_split`).
        backend: Where the chunks are generated (``workers`` applies to the process pool).

    Returns:
        The manifest (also written to ``out_dir/manifest.json``).

    Raises:
        ConfigError: For an unknown format, a bad size or seed, or an unwritable folder.
    """
    if fmt not in FORMATS:
        raise ConfigError(f"dataset format {fmt!r} is not one of {', '.join(FORMATS)}")
    if seed < 0 or n < 0 or workers < 1:
        raise ConfigError(f"need n ≥ 0, seed ≥ 0 and workers ≥ 1 (got n={n}, seed={seed}, workers={workers})")
    ids = [str(t) for t in (task_ids if task_ids is not None else dataset_task_ids(n))]
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create dataset folder {out}: {exc.strerror or exc}") from exc
    # JSON needs the member arrays as lists; a Parquet table is built from the arrays.
    chunks = [(ids[i : i + CHUNK], seed, fmt == "jsonl") for i in range(0, len(ids), CHUNK)]
    files: list[dict[str, Any]] = []
    by_style: dict[str, list[int]] = {}
    ext = "parquet" if fmt == "parquet" else "jsonl"
    for k, records in enumerate(_map(_chunk_records, chunks, workers, backend)):
        path = out / f"structures-{k:05d}.{ext}"
        _write_shard(path, records, fmt)
        files.append({"path": path.name, "structures": len(records), "sha256": _sha256(path)})
        for r in records:
            by_style.setdefault(r["style"], []).append(r["n_members"])
    report = count_report(by_style)
    manifest = {
        "format": f"buildbench.dreamhouse.dataset.{fmt}",
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "n": len(ids),
        "files": files,
        "member_counts": {
            "overall": asdict(report.overall),
            "per_style": {k: asdict(v) for k, v in report.per_style.items()},
        },
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return manifest


def read_dataset(folder: str | Path) -> Iterator[StoredHouse]:
    """Read back the structures of a folder written by :func:`write_dataset`, in order.

    Raises:
        ConfigError: When the folder has no readable manifest, the manifest does not list its
            files as ``{"path": <file name in the folder>}``, or a listed file is missing.
    """
    root = Path(folder)
    if not (root / MANIFEST).exists():
        raise ConfigError(f"{root} is no dataset folder: it has no {MANIFEST} (write one with "
                          "`buildbench dreamhouse generate`)")
    try:
        manifest = parse_json(read_text(root / MANIFEST))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{root} has no readable {MANIFEST}: {exc}") from exc
    for path in _listed_files(root, manifest):
        if not path.exists():
            raise ConfigError(f"dataset file {path} listed in the manifest is missing")
        if path.suffix == ".jsonl":
            rows: Iterable[tuple[str, Any]] = ((f"{path}:{n}", _row(line, f"{path}:{n}"))
                                               for n, line in iter_lines(path) if line)
        else:
            check_regular_file(path, limit_name="input_file_bytes")
            rows = ((f"{path} row {k}", r) for k, r in enumerate(_table_rows(pq.read_table(path))))
        for where, r in rows:
            yield record_house(r, where)


def _listed_files(root: Path, manifest: Any) -> list[Path]:
    """The shard files a manifest lists, each a plain file name inside ``root``."""
    files = manifest.get("files", []) if isinstance(manifest, dict) else None
    if not isinstance(files, list):
        raise ConfigError(f"{root / MANIFEST}: must be an object whose \"files\" is a list")
    paths = []
    for k, entry in enumerate(files):
        name = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or Path(name).name != name or name in (".", ".."):
            raise ConfigError(f"{root / MANIFEST}: files[{k}] must be an object whose \"path\" names a file in "
                              f"the folder, got {str(entry)[:80]}")
        paths.append(root / name)
    return paths


def _row(line: str, where: str) -> Any:
    try:
        return parse_json(line)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: not JSON ({exc.msg})") from None


def _table_rows(table: pa.Table) -> Iterator[dict[str, Any]]:
    """The rows of a shard as :func:`house_record` dicts, column by column: the member arrays
    (:data:`_NUMBER_LISTS`) are slices of each column's values, the same float64 numbers as Python lists would hold."""
    columns: dict[str, list[Any]] = {}
    for name in table.column_names:
        col = table.column(name).combine_chunks()
        if name in _NUMBER_LISTS and pa.types.is_list(col.type) and pa.types.is_float64(col.type.value_type) \
                and col.null_count == 0 and col.values.null_count == 0:  # fmt: skip
            flat = col.values.to_numpy().copy()  # writable, like the arrays np.asarray makes
            ends = col.offsets.to_numpy()
            columns[name] = [flat[a:b] for a, b in zip(ends[:-1].tolist(), ends[1:].tolist(), strict=True)]
        else:
            columns[name] = col.to_pylist()
    for i in range(table.num_rows):
        yield {name: values[i] for name, values in columns.items()}
