"""Trajectories recorded in the real game, read into our ``Trajectory`` (real frame, metres = units).

Two recorders exist:

* the **Lua log** of a ``.bsg`` our exporter wrote (``besiege.lua_script``; BuildArena 1.0's
  format): ``t, ID_k, x, y, z`` lines at 25 Hz, read by ``besiege.read_trajectory_csv`` (the
  reader ``buildbench buildarena analyze`` uses);
* BuildArena 2.0's **Block Tracker** mod (:mod:`.tracker`): a CSV with ``# key,value`` header
  lines, then one row per sample and tracked block at 10 Hz with position, rotation, machine
  integrity and the keys held.

``read_recording`` tells them apart by their first line. The machine records that go with a
recording (the valid-action and full-action history JSON) are read by :mod:`.records`.
Every reader takes regular files only, up to ``MAX_RECORDING_BYTES``, and refuses bad input
with a `RecordingError` whose text names the file and, for a line, its number.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..model import ControlEntry
from ..physics import Trajectory

#: A tracker samples each target 10 times a second in ~200 bytes: 64 MB is over 8 hours of one block.
MAX_RECORDING_BYTES = 64 * 1024 * 1024


class RecordingError(ValueError):
    """A recording or machine record that cannot be read; the text names the file (and line)."""


@dataclass(frozen=True)
class Recording:
    """A trajectory recorded in Besiege.

    Attributes:
        path: The file it was read from.
        format: ``lua-log`` or ``block-tracker``.
        trajectory: Positions in our real frame (``[east, north, up]``); ids are block ids
            (``1`` for the starting block; ``guid:<GUID>`` for a tracker target we cannot name).
        rotation: Tracker only: each id's rotation as a Unity quaternion ``(w, x, y, z)``,
            shape (T, len(ids), 4).
        integrity: Tracker only: the machine's summed block health over its maximum, per sample.
        clusters: Tracker only: pieces the machine is in, per sample.
        keys_held: Tracker only: the keys held at each sample.
        header: The tracker's ``# key,value`` lines.
    """

    path: str
    format: str
    trajectory: Trajectory
    rotation: np.ndarray | None = None
    integrity: np.ndarray | None = None
    clusters: np.ndarray | None = None
    keys_held: list[frozenset[str]] | None = None
    header: dict[str, str] = field(default_factory=dict)

    @property
    def duration_s(self) -> float:
        return float(self.trajectory.time[-1] - self.trajectory.time[0]) if self.trajectory.time.size else 0.0


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_regular(path: str | os.PathLike[str], mode: int) -> RecordingError:
    kind = next((name for test, name in _KINDS if test(mode)), "not a plain file")
    return RecordingError(f"{path}: is {kind}, not a regular file")


def read_recording_text(path: str | os.PathLike[str]) -> str:
    """A recording's (or record's) text: a regular file only (checked before and after opening,
    which is non-blocking, so a FIFO cannot hang it), at most ``MAX_RECORDING_BYTES`` counted
    while reading, UTF-8 (a byte-order mark dropped).

    Raises:
        RecordingError: Unreadable or refused, with the reason (and the line of bad UTF-8).
    """
    cap = MAX_RECORDING_BYTES
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise _not_regular(path, info.st_mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            opened = os.fstat(fh.fileno()).st_mode
            if not stat.S_ISREG(opened):
                raise _not_regular(path, opened)
            data = fh.read(cap + 1)
    except OSError as exc:
        raise RecordingError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > cap:
        raise RecordingError(f"{path}: over the {cap}-byte limit of a recording")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = 1 + data.count(b"\n", 0, exc.start)
        raise RecordingError(f"{path} line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x})") from None


def _is_tracker(text: str) -> bool:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first.startswith("#") or first.lower().startswith("sample_index")


def read_recording(path: str | os.PathLike[str], types: Mapping[str, str] | None = None) -> Recording:
    """The Lua log or Block Tracker CSV at ``path``.

    Args:
        types: Block type by id, for a Lua log (see ``besiege.read_trajectory_csv``).

    Raises:
        RecordingError: As :func:`read_recording_text`, or a malformed line (named).
    """
    from ..besiege import TrajectoryCsvError, read_trajectory_csv
    from .tracker import read_tracker_csv

    text = read_recording_text(path)
    if _is_tracker(text):
        return read_tracker_csv(text, str(path))
    try:
        traj = read_trajectory_csv(text, types)
    except TrajectoryCsvError as exc:
        raise RecordingError(f"{path} {exc}" if str(exc).startswith("line ") else f"{path}: {exc}") from None
    return Recording(str(path), "lua-log", traj)


def controls_from_keys(recording: Recording) -> list[ControlEntry]:
    """The key presses a recording's ``keys_held`` column shows, as a control sequence.

    A key held at consecutive samples is one press from its first sample to the sample after
    its last one (the recorder's resolution); empty without a keys column.
    """
    if not recording.keys_held:
        return []
    time = recording.trajectory.time
    t0 = float(time[0])
    step = float(np.median(np.diff(time))) if time.size > 1 else 0.1
    presses: list[ControlEntry] = []
    started: dict[str, float] = {}
    for k, held in enumerate([*recording.keys_held, frozenset()]):
        now = float(time[k]) - t0 if k < time.size else float(time[-1]) - t0 + step
        for key in sorted(held - started.keys()):
            started[key] = now
        for key in sorted(started.keys() - held):
            begin = started.pop(key)
            presses.append(ControlEntry(round(begin, 3), key, round(now - begin, 3)))
    return sorted(presses, key=lambda c: (c.time, c.key))


_KEY_SPLIT = re.compile(r"[;|+\s]+")


def split_keys(text: str) -> frozenset[str]:
    """The key names of a tracker's keys column (one name, or several joined by ``;``, ``|``,
    ``+`` or spaces: the public files only show one key at a time, so the joiner is a guess
    that accepts each)."""
    return frozenset(k for k in _KEY_SPLIT.split(text.strip()) if k)


__all__ = ["MAX_RECORDING_BYTES", "Recording", "RecordingError", "controls_from_keys", "read_recording",
           "read_recording_text", "split_keys"]
