"""BuildArena 2.0's Block Tracker CSV (the game mod that records a machine's run).

Format, as the public Construction Challenge entries show it: ``# key,value`` lines
(``sample_rate_hz``, ``target_guids`` joined by ``;``, ``output_basename``, the source of each
column), then a header row and one row per sample and tracked block::

    sample_index,target_index,target_guid,target_name,elapsed_seconds,unity_time_seconds,
    input_keys_held,input_keys_down,input_keys_up,machine_integrity,machine_block_health_sum,
    machine_block_max_health_sum,machine_block_count,machine_cluster_count,target_block_health,
    target_block_max_health,x,y,z,rot_w,rot_x,rot_y,rot_z

Positions are Unity world coordinates (y up); we keep the real frame, so ``[x, z, y]``.
The starting block's row is named ``StartingBlock`` and becomes our id ``1``; another target
is known only by its GUID (the ``.bsg`` maps GUIDs to blocks; a history JSON does not), so
it becomes ``guid:<GUID>``. Columns are found by name; those below ``REQUIRED`` must be there.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence

import numpy as np

from buildbench.jsonio import finite_float

from ..model import STARTING_BLOCK
from ..physics import Trajectory
from . import Recording, RecordingError, split_keys

REQUIRED = ("sample_index", "target_guid", "target_name", "elapsed_seconds", "x", "y", "z")
ROTATION = ("rot_w", "rot_x", "rot_y", "rot_z")
STARTING_NAME = "StartingBlock"
#: A tracker never records more blocks than a machine has (Besiege's block limit is far below).
MAX_TARGETS = 10_000


class _Row:
    __slots__ = ("index", "line", "target", "time", "position", "rotation", "integrity", "clusters", "keys")

    def __init__(self, index: int, line: int, target: str, time: float, position: tuple[float, float, float],
                 rotation: tuple[float, ...] | None, integrity: float | None, clusters: float | None,
                 keys: frozenset[str] | None) -> None:
        self.index, self.line, self.target, self.time = index, line, target, time
        self.position, self.rotation, self.integrity, self.clusters, self.keys = (
            position, rotation, integrity, clusters, keys)


def _number(path: str, line: int, column: str, text: str) -> float:
    try:
        return finite_float(text)
    except ValueError as exc:
        raise RecordingError(f"{path} line {line}: {column} {text!r} {exc}") from None


def _target_id(name: str, guid: str) -> str:
    return "1" if name == STARTING_NAME else f"guid:{guid}"


def read_tracker_csv(text: str, path: str = "<tracker>") -> Recording:
    """A Block Tracker CSV as a :class:`Recording` (see the module docstring).

    Samples are the sample indices at which every target has a row, in index order.

    Raises:
        RecordingError: A missing column, a malformed or repeated row, times that go back, or
            no complete sample; the text names ``path`` and the line.
    """
    header: dict[str, str] = {}
    columns: dict[str, int] | None = None
    rows: dict[tuple[int, str], _Row] = {}
    targets: list[str] = []
    lines = text.splitlines()
    for number, fields in _records(lines):
        if columns is None:
            if len(fields) == 1 and fields[0].startswith("#"):
                name, _, value = fields[0].lstrip("#").strip().partition(",")
                header[name.strip()] = value.strip()
                continue
            if fields[0].startswith("#"):
                name = fields[0].lstrip("#").strip()
                header[name] = ",".join(fields[1:]).strip()
                continue
            columns = {name.strip(): k for k, name in enumerate(fields)}
            missing = [c for c in REQUIRED if c not in columns]
            if missing:
                raise RecordingError(f"{path} line {number}: not a Block Tracker header (missing "
                                     f"{', '.join(missing)})")
            continue
        row = _parse_row(path, number, fields, columns)
        key = (row.index, row.target)
        if key in rows:
            raise RecordingError(f"{path} line {number}: sample {row.index} of {row.target} again "
                                 f"(first on line {rows[key].line})")
        if row.target not in targets:
            if len(targets) >= MAX_TARGETS:
                raise RecordingError(f"{path} line {number}: more than {MAX_TARGETS} tracked blocks")
            targets.append(row.target)
        rows[key] = row
    if columns is None:
        raise RecordingError(f"{path}: no Block Tracker header row (expected {', '.join(REQUIRED)})")
    return _assemble(path, header, rows, targets, has_rotation=all(c in columns for c in ROTATION))


def _records(lines: Sequence[str]) -> list[tuple[int, list[str]]]:
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        out.append((number, next(csv.reader([line]))))
    return out


def _parse_row(path: str, number: int, fields: list[str], columns: dict[str, int]) -> _Row:
    if len(fields) != len(columns):
        raise RecordingError(f"{path} line {number}: {len(fields)} fields, the header has {len(columns)}")

    def get(name: str) -> str:
        return fields[columns[name]].strip()

    def num(name: str) -> float:
        return _number(path, number, name, get(name))

    index = num("sample_index")
    if index < 0 or index != int(index):
        raise RecordingError(f"{path} line {number}: sample_index {get('sample_index')!r} is not a count")
    guid, name = get("target_guid"), get("target_name")
    if not guid and name != STARTING_NAME:
        raise RecordingError(f"{path} line {number}: a target with neither a GUID nor the name {STARTING_NAME}")
    x, y_up, z = num("x"), num("y"), num("z")
    rotation = tuple(num(c) for c in ROTATION) if all(c in columns for c in ROTATION) else None

    def optional(name: str) -> float | None:
        return num(name) if name in columns and get(name) != "" else None

    keys = split_keys(get("input_keys_held")) if "input_keys_held" in columns else None
    return _Row(int(index), number, _target_id(name, guid), num("elapsed_seconds"), (x, z, y_up), rotation,
                optional("machine_integrity"), optional("machine_cluster_count"), keys)


def _assemble(path: str, header: dict[str, str], rows: dict[tuple[int, str], _Row], targets: list[str],
              has_rotation: bool) -> Recording:
    by_sample: dict[int, dict[str, _Row]] = {}
    for (index, target), row in rows.items():
        by_sample.setdefault(index, {})[target] = row
    complete = [i for i in sorted(by_sample) if len(by_sample[i]) == len(targets)]
    if not complete:
        raise RecordingError(f"{path}: no sample at which every tracked block has a row")
    samples = [by_sample[i] for i in complete]
    firsts = [s[targets[0]] for s in samples]
    time = np.array([r.time for r in firsts])
    back = np.flatnonzero(np.diff(time) < 0)
    if back.size:
        row = firsts[int(back[0]) + 1]
        raise RecordingError(f"{path} line {row.line}: elapsed_seconds {row.time:g} goes back in time")
    position = np.array([[s[t].position for t in targets] for s in samples], dtype=float)
    rotation = (np.array([[s[t].rotation for t in targets] for s in samples], dtype=float)
                if has_rotation else None)
    integrity = np.array([r.integrity for r in firsts], dtype=float) if all(
        r.integrity is not None for r in firsts) else None
    clusters = np.array([r.clusters for r in firsts], dtype=float) if all(
        r.clusters is not None for r in firsts) else None
    keys = [r.keys for r in firsts] if all(r.keys is not None for r in firsts) else None
    traj = Trajectory(
        time=time - time[0],
        ids=list(targets),
        types=[STARTING_BLOCK if t == "1" else "unknown" for t in targets],
        position=position,
        cannon_ids=[],
        burning=np.zeros((time.size, 0), dtype=bool),
        ballast_mass=np.zeros(0),
    )
    return Recording(path, "block-tracker", traj, rotation, integrity, clusters,
                     [k for k in keys if k is not None] if keys is not None else None, header)
