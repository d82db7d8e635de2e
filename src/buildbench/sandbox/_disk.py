"""The work-folder quota: how much disk a sandbox holds, measured from the host side.

The work folder is a host folder (the harness reads what the code leaves there), so no
tmpfs can cap it. Instead the runner has ``RLIMIT_FSIZE`` (no single file past the cap) and
the parent measures the folder while a call runs and after it: every entry counts its
allocated blocks, at least one 4 KiB block (so a million empty files count too), each inode
once. Files the sandbox deleted but keeps open still fill the disk; when the sandbox has its
own uid (bwrap as root) they are found through ``/proc`` and counted as well.
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


class FolderUnmeasurable(OSError):
    """The folder holds something the harness cannot look into (a folder it may not list)."""


def _charge(info: os.stat_result) -> int:
    return max(info.st_blocks * 512, MIN_ENTRY_BYTES)


def folder_bytes(root: str, stop_above: int | None = None) -> int:
    """Bytes ``root`` and everything below it hold on disk, never following links.

    With ``stop_above``, the walk stops as soon as the count passes it (and returns the count
    so far): a folder of a million files costs no more to judge than one just over the cap.
    A folder its owner made unreadable is opened up (it is the harness's work folder: nothing
    in it may hide from the quota); any depth and path length is measured (see `_tree.walk`).

    Raises:
        FolderUnmeasurable: Something in it cannot be listed, or deep folders moved during the walk.
    """
    seen: set[tuple[int, int]] = set()
    try:
        total = _charge(os.lstat(root))
        for _, _, info in walk(root, open_up=True):
            key = (info.st_dev, info.st_ino)
            if key in seen:
                continue
            seen.add(key)
            total += _charge(info)
            if stop_above is not None and total > stop_above:
                return total
    except OSError as exc:
        raise FolderUnmeasurable(f"{root}: cannot be walked ({exc.strerror or exc})") from None
    return total


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
    """The cap on one work folder and the measurements made against it.

    Attributes:
        folder: The work folder.
        cap_bytes: The most it may hold.
        uid: The sandbox's own uid, when it has one (its deleted-but-open files count too).
    """

    folder: str
    cap_bytes: int
    uid: int | None = None
    used_bytes: int | None = None
    interval_s: float = MIN_INTERVAL_S
    _unlinked_bytes: int = 0
    _unlinked_at: float = float("-inf")

    def measure(self, stop_above: int | None = None) -> int:
        """Measure now; remember the value and pace the next measurement by this one's cost.

        The folder is walked every time (up to ``stop_above``); the deleted-but-open files (a
        scan of ``/proc``, the costlier part) at most once per interval, so quick calls in a
        row stay quick.
        """
        started = time.monotonic()
        used = folder_bytes(self.folder, stop_above)
        if self.uid is not None and started - self._unlinked_at >= self.interval_s:
            self._unlinked_bytes = open_unlinked_bytes(self.uid, os.lstat(self.folder).st_dev)
            self._unlinked_at = started
        self.interval_s = max(MIN_INTERVAL_S, 10 * (time.monotonic() - started))
        self.used_bytes = used + self._unlinked_bytes
        return self.used_bytes

    def allowed_bytes(self, at_start: int) -> int:
        """The most a call may leave: the cap, or what the folder held at the call's start
        when that was more already (a call may shrink such a folder, never grow it)."""
        return max(self.cap_bytes, at_start)

    def over(self, at_start: int) -> str | None:
        """Measure; a sentence saying how the folder broke the quota, or None."""
        try:
            used = self.measure(stop_above=self.allowed_bytes(at_start))
        except FolderUnmeasurable as exc:
            return f"the work folder could not be measured for the disk limit: {exc}"
        if used > self.allowed_bytes(at_start):
            self.used_bytes = None  # a walk cut short: the next call's start measures it all
            return (f"the work folder holds {used / 2**20:.1f} MiB, over the disk limit of "
                    f"{self.cap_bytes / 2**20:g} MiB")
        return None
