"""The work-folder quota: how much disk a sandbox holds, measured from the host side.

The work folder is a host folder (the harness reads what the code leaves there), so no
tmpfs can cap it. Instead the runner has ``RLIMIT_FSIZE`` (no single file past the cap) and
the parent measures the folder while a call runs and after it: every entry counts its
allocated blocks, at least one 4 KiB block (so a million empty files count too), each inode
once. Files the sandbox deleted but keeps open still fill the disk; when the sandbox has its
own uid (bwrap as root) they are found through ``/proc`` and counted as well. Entries have a
cap of their own (``Limits.disk_entries``): measuring costs a step per entry, and without it
a folder of 10^5 empty files (well under a byte cap of GiBs) made every measurement slower
than the call it watched.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass

from buildbench.sandbox._tree import walk

#: What each entry costs at least: one filesystem block.
MIN_ENTRY_BYTES = 4096
#: Shortest pause between two measurements during a call; longer when measuring is slow.
MIN_INTERVAL_S = 0.02
#: A call does not start in a folder holding more than this many times its entry cap.
REFUSE_FACTOR = 4


class FolderUnmeasurable(OSError):
    """The folder holds something the harness cannot look into (a folder it may not list)."""


def _charge(info: os.stat_result) -> int:
    return max(info.st_blocks * 512, MIN_ENTRY_BYTES)


@dataclass(frozen=True)
class Usage:
    """What a walk of the work folder found.

    Attributes:
        bytes: Bytes charged (see the module docstring), each inode once.
        entries: Names visited below the folder (hard links each count: each costs the walk a step).
        complete: False when the walk stopped at a bound: the folder holds more than this.
    """

    bytes: int
    entries: int
    complete: bool = True


def folder_usage(root: str, stop_bytes: int | None = None, stop_entries: int | None = None) -> Usage:
    """What ``root`` and everything below it hold on disk, never following links.

    The walk stops as soon as the bytes pass ``stop_bytes`` or the entries ``stop_entries``:
    judging a folder of a million files costs no more than judging one just over the cap.
    A folder its owner made unreadable is opened up (it is the harness's work folder: nothing
    in it may hide from the quota); any depth and path length is measured (see `_tree.walk`).

    Raises:
        FolderUnmeasurable: Something in it cannot be listed, or deep folders moved during the walk.
    """
    seen: set[tuple[int, int]] = set()
    entries = 0
    try:
        total = _charge(os.lstat(root))
        for _, _, info in walk(root, open_up=True):
            entries += 1
            key = (info.st_dev, info.st_ino)
            if key not in seen:
                seen.add(key)
                total += _charge(info)
            if ((stop_bytes is not None and total > stop_bytes)
                    or (stop_entries is not None and entries > stop_entries)):
                return Usage(total, entries, complete=False)
    except OSError as exc:
        raise FolderUnmeasurable(f"{root}: cannot be walked ({exc.strerror or exc})") from None
    return Usage(total, entries)


def folder_bytes(root: str) -> int:
    """Bytes ``root`` and everything below it hold on disk (a whole walk, see `folder_usage`)."""
    return folder_usage(root).bytes


def crowded(folder: str, cap_entries: int) -> str | None:
    """Why no call may start in ``folder``: a sentence when it holds more than `REFUSE_FACTOR`
    times ``cap_entries`` (found by a walk that stops there), else None. Checked before a
    process is started for it too, so that such a folder costs each call one bounded walk,
    not the hand-over of all of it to a new sandbox and back."""
    try:
        usage = folder_usage(folder, stop_entries=REFUSE_FACTOR * cap_entries)
    except FolderUnmeasurable:
        return None  # the check after the call says why
    return None if usage.complete else _crowded_message(cap_entries)


def _crowded_message(cap_entries: int) -> str:
    return (f"the work folder holds more than {REFUSE_FACTOR * cap_entries} entries, over the disk "
            f"limit of {cap_entries} entries; the call was not run (the limit counts every file, "
            "folder and link)")


def open_unlinked_bytes(uid: int, device: int) -> int:
    """Bytes of files on ``device`` that processes of ``uid`` keep open after deleting them."""
    total = 0
    seen: set[int] = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                info = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if info.st_nlink == 0 and info.st_dev == device and stat.S_ISREG(info.st_mode) and info.st_ino not in seen:
                seen.add(info.st_ino)
                total += _charge(info)
    return total


@dataclass
class DiskQuota:
    """The caps on one work folder and the measurements made against it.

    Every walk is bounded by the entry cap: a folder of a million entries costs no more to
    judge than one just over it, and a call does not start in a folder holding more than
    `REFUSE_FACTOR` times the entry cap (knowing that it only shrank would take a walk as
    long as the folder, at every measurement).

    Attributes:
        folder: The work folder.
        cap_bytes: The most bytes it may hold.
        cap_entries: The most entries it may hold.
        uid: The sandbox's own uid, when it has one (its deleted-but-open files count too).
        used: The last measurement (incomplete when that walk stopped at a bound).
    """

    folder: str
    cap_bytes: int
    cap_entries: int
    uid: int | None = None
    used: Usage | None = None
    interval_s: float = MIN_INTERVAL_S
    _unlinked_bytes: int = 0
    _unlinked_at: float = float("-inf")

    def measure(self, stop_bytes: int | None = None, stop_entries: int | None = None) -> Usage:
        """Measure now; remember the value and pace the next measurement by this one's cost.

        The folder is walked every time (up to the bounds); the deleted-but-open files (a
        scan of ``/proc``, the costlier part) at most once per interval, so quick calls in a
        row stay quick.
        """
        started = time.monotonic()
        usage = folder_usage(self.folder, stop_bytes, stop_entries)
        if self.uid is not None and started - self._unlinked_at >= self.interval_s:
            self._unlinked_bytes = open_unlinked_bytes(self.uid, os.lstat(self.folder).st_dev)
            self._unlinked_at = started
        self.interval_s = max(MIN_INTERVAL_S, 10 * (time.monotonic() - started))
        self.used = Usage(usage.bytes + self._unlinked_bytes, usage.entries, usage.complete)
        return self.used

    def at_start(self) -> Usage | str:
        """What the folder holds as a call starts (the previous call's last measurement when
        that was whole), or a sentence saying why the call may not start (see `crowded`)."""
        if self.used is None or not self.used.complete:
            try:
                self.measure(stop_entries=REFUSE_FACTOR * self.cap_entries)
            except FolderUnmeasurable:
                return Usage(0, 0)  # the check after the call says why
        assert self.used is not None
        return self.used if self.used.complete else _crowded_message(self.cap_entries)

    def allowed(self, at_start: Usage) -> tuple[int, int]:
        """The most bytes and entries a call may leave: the caps, or what the folder held at the
        call's start when that was more already (a call may shrink such a folder, never grow it)."""
        return max(self.cap_bytes, at_start.bytes), max(self.cap_entries, at_start.entries)

    def over(self, at_start: Usage) -> str | None:
        """Measure; a sentence saying how the folder broke the quota, or None."""
        most_bytes, most_entries = self.allowed(at_start)
        try:
            used = self.measure(most_bytes, most_entries)
        except FolderUnmeasurable as exc:
            return f"the work folder could not be measured for the disk limit: {exc}"
        if used.complete and used.bytes <= most_bytes:
            return None
        self.used = None  # the deleted-but-open files counted may go with the process: measure afresh
        if used.bytes > most_bytes:
            return (f"the work folder holds {used.bytes / 2**20:.1f} MiB, over the disk limit of "
                    f"{self.cap_bytes / 2**20:g} MiB")
        return (f"the work folder holds more than {most_entries} entries, over the disk limit of "
                f"{self.cap_entries} entries")
