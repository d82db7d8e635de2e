"""One memory budget per sandbox: every process it starts and its private ``/tmp`` and ``/dev/shm``.

RLIMIT_AS caps one process; a sandbox that forks (or writes to a tmpfs, or fills a ``memfd``) is
many address spaces and some files held in memory. The budget (``Limits.memory_mb``) covers them
all, by the first mechanism this machine allows:

- ``cgroup``: a memory control group of its own below the harness's group, cgroup v2 where the
  harness's group delegates the memory controller, else cgroup v1 (the ``memory`` hierarchy,
  writable by root). The sandbox enters it before it runs anything (a shell writes its own pid
  to ``cgroup.procs`` and execs bwrap), so every process it ever starts is inside, and pages it
  writes to a tmpfs or a memfd are charged to it. The kernel stops the tree at the limit (its
  OOM killer, counted in ``oom_kill``); the parent sees the count rise and ends the sandbox
  with status ``limit``.
- ``supervisor``: no usable cgroup (another machine, no root). The parent sums, at each check
  (its own cadence, `MemoryBudget.interval_s`: every `MIN_CHECK_INTERVAL_S`, longer only when
  one check costs more than a `CHECK_COST_FACTOR`-th of that in CPU), the resident memory of
  every process of the sandbox (its uid's processes and the descendants of the one it started)
  and what its two tmpfs hold, and kills the sandbox at the limit. Between two checks the tree
  may grow beyond it: the tolerance is what it can allocate in one interval, plus what it
  allocates while the parent waits for a CPU on a busy machine (the tree's processes compete
  with it). It kills on what it saw, never on a forecast of growth: a tree that stops just under
  the budget is within it. Anonymous files (``memfd_create``) that no process maps are not seen;
  RLIMIT_FSIZE caps each one at ``disk_mb``.

The tmpfs are also sized so that both full hold at most the budget (``memory_mb / 2`` each), and
RLIMIT_NPROC still bounds the number of processes and threads, all inside the same budget.

A cgroup also charges kernel memory (page tables, pipe buffers, the inodes of the files it makes)
and the page cache of what the sandbox reads, which RLIMIT_AS does not see: so that a single
process that fills its address space still gets its ``MemoryError`` (status ``memory``) rather
than the group's kill, the group's limit is the budget plus `cache_allowance_bytes` (a 32nd of
it, at least 16 MiB): that allowance is the stated tolerance of the cgroup mechanism.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import time
from pathlib import Path
from typing import Literal

MemoryMechanism = Literal["cgroup", "supervisor"]

_CGROUP_ROOT = Path("/sys/fs/cgroup")
#: Prefix of the groups the sandbox creates; `_remove_stale_groups_once` finds leftovers by it.
GROUP_PREFIX = "buildbench-sandbox-"
#: Shortest pause between two supervisor checks while a call runs.
MIN_CHECK_INTERVAL_S = 0.01
#: The supervisor's checks take at most about a this-th of a CPU: the pause after a check is at
#: least this many times the CPU time it took (its wall time would also count the waits for a CPU
#: on a busy machine, and slow the checks down exactly when the tree grows unwatched).
CHECK_COST_FACTOR = 5


def cache_allowance_bytes(limit_bytes: int) -> int:
    """What a cgroup allows beyond the budget for kernel memory and page cache (module docstring)."""
    return max(16 * 1024 * 1024, limit_bytes // 32)


def tmpfs_bytes(memory_mb: int) -> int:
    """Size of each of the sandbox's two tmpfs (``/tmp``, ``/dev/shm``): both full fit the budget."""
    return memory_mb * 1024 * 1024 // 2


def _own_group(controller: str) -> tuple[Path, int] | None:
    """Folder of this process's cgroup holding ``controller`` and its version (1 or 2), or None."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            folder = _CGROUP_ROOT / controller / path.lstrip("/")
            if folder.is_dir():
                return folder, 1
    for line in lines:
        if line.startswith("0::"):
            path = line.split(":", 2)[2].lstrip("/")
            for mount in (_CGROUP_ROOT, _CGROUP_ROOT / "unified"):
                folder = mount / path
                try:
                    delegated = controller in (folder / "cgroup.subtree_control").read_text().split()
                except OSError:
                    continue
                if delegated:
                    return folder, 2
    return None


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


class MemoryBudget:
    """The memory budget of one sandbox (see the module docstring).

    Use: `wrap` the command before starting it, `set_root` with the started process's pid,
    `over` at each check, `close` once the tree is gone.
    """

    def __init__(self, limit_bytes: int, uid: int | None = None,
                 what: str = "the sandbox (all its processes and its /tmp and /dev/shm together") -> None:
        self.limit_bytes = limit_bytes
        self.what = what
        self.uid = uid
        self.peak_bytes = 0
        self._root_pid: int | None = None
        self._oom_at_start = 0
        self._group: Path | None = None
        self._version = 0
        self._check_cpu_s = 0.0
        if os.geteuid() == 0:
            self._group, self._version = self._make_group()
        self.mechanism: MemoryMechanism = "cgroup" if self._group is not None else "supervisor"

    def _make_group(self) -> tuple[Path | None, int]:
        found = _own_group("memory")
        if found is None:
            return None, 0
        parent, version = found
        _remove_stale_groups_once(parent)
        group = parent / f"{GROUP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        try:
            group.mkdir()
        except OSError:
            return None, 0
        try:
            limit = str(self.limit_bytes + cache_allowance_bytes(self.limit_bytes))
            if version == 1:
                _write(group / "memory.limit_in_bytes", limit)
                if (group / "memory.memsw.limit_in_bytes").exists():
                    _write(group / "memory.memsw.limit_in_bytes", limit)  # no swap beyond the budget
            else:
                _write(group / "memory.max", limit)
                with contextlib.suppress(OSError):
                    _write(group / "memory.swap.max", "0")
                with contextlib.suppress(OSError):
                    _write(group / "memory.oom.group", "1")  # the kernel kills the whole tree
        except OSError:
            with contextlib.suppress(OSError):
                group.rmdir()
            return None, 0
        return group, version

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run so that it starts inside the group (unchanged for the supervisor)."""
        if self._group is None:
            return argv
        procs = str(self._group / "cgroup.procs")
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', procs, *argv]

    def enter(self, pid: int) -> None:
        """Put the started process ``pid`` into the group (for a process not started by `wrap`;
        it must not have started the work to be bounded yet) and make it the tree's root."""
        self.set_root(pid)
        if self._group is not None:
            try:
                _write(self._group / "cgroup.procs", str(pid))
            except OSError:
                self.close()
                self.mechanism = "supervisor"

    def set_root(self, pid: int) -> None:
        """The pid of the started process (the root of the sandbox's tree)."""
        self._root_pid = pid

    @property
    def interval_s(self) -> float | None:
        """How long to wait before the next `over` while a call runs (supervisor), or None where the
        kernel holds the limit (cgroup: a check only reads what it counted, at the caller's cadence)."""
        if self._group is not None:
            return None
        return max(MIN_CHECK_INTERVAL_S, CHECK_COST_FACTOR * self._check_cpu_s)

    def begin_call(self) -> None:
        """Mark the start of a call: `over` and `peak_bytes` tell only what happens from here on."""
        self._oom_at_start = self._oom_kills()
        self.peak_bytes = 0
        if self._group is not None and self._version == 1:
            with contextlib.suppress(OSError):
                _write(self._group / "memory.max_usage_in_bytes", "0")  # v1 resets its peak so

    def _refresh_peak(self) -> None:
        """Take the kernel's record of the group's peak where it keeps one (v1 since `begin_call`)."""
        if self._group is not None:
            name = "memory.max_usage_in_bytes" if self._version == 1 else "memory.peak"
            with contextlib.suppress(OSError, ValueError):
                self.peak_bytes = max(self.peak_bytes, int((self._group / name).read_text()))

    def over(self) -> str | None:
        """One line saying the budget was exceeded since `begin_call`, or None."""
        used = self._usage()
        self.peak_bytes = max(self.peak_bytes, used)
        self._refresh_peak()
        exceeded = (self._oom_kills() > self._oom_at_start if self._group is not None
                    else used > self.limit_bytes)
        allowance = f" + {cache_allowance_bytes(self.limit_bytes) / 2**20:g} MiB for the kernel" if self._group else ""
        if not exceeded:
            return None
        mib = self.limit_bytes / (1024 * 1024)
        return f"memory limit: the memory budget of {mib:g} MiB of {self.what}{allowance}, {self.mechanism}) was exceeded"

    def _oom_kills(self) -> int:
        if self._group is None:
            return 0
        name = "memory.oom_control" if self._version == 1 else "memory.events"
        try:
            for line in (self._group / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def _usage(self) -> int:
        """Bytes the sandbox holds now (the group's charge, or the supervisor's sum)."""
        if self._group is not None:
            name = "memory.usage_in_bytes" if self._version == 1 else "memory.current"
            try:
                return int((self._group / name).read_text())
            except (OSError, ValueError):
                return 0
        started = time.thread_time()
        pids = self._tree()
        used = sum(_resident_bytes(pid) for pid in pids) + _tmpfs_used(pids)
        self._check_cpu_s = time.thread_time() - started
        return used

    def _tree(self) -> set[int]:
        """Pids of the sandbox: descendants of the root process, and every process of its uid."""
        parents: dict[int, int] = {}
        found: set[int] = set()
        # Raw reads and one open per process: this runs every few ms while a call runs (its cost paces it).
        for name in filter(str.isdigit, os.listdir("/proc")):
            pid = int(name)
            try:
                data, owner = _read_proc(f"/proc/{name}/stat")
                parents[pid] = int(data[data.rindex(b")") + 2:].split(b" ", 2)[1])
            except (OSError, ValueError, IndexError):
                continue
            if owner == self.uid:  # a /proc/<pid> file belongs to the process's uid
                found.add(pid)
        if self._root_pid is not None:
            frontier = {self._root_pid}
            while frontier:
                found |= frontier
                frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        return found

    def close(self) -> None:
        """Remove the group (after every process in it is gone)."""
        if self._group is not None:
            self._refresh_peak()
            # A process just killed leaves the group a moment after it is reaped: try a few times
            # (what is still left is removed by the next run, `_remove_stale_groups_once`).
            for _ in range(50):
                try:
                    self._group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
            self._group = None


def _resident_bytes(pid: int) -> int:
    """Private and shared-memory pages ``pid`` holds (``RssAnon + RssShmem``), 0 when it is gone.

    Pages of files it maps (the interpreter, libraries) are left out: they are shared by every
    process of the tree and come back from disk whenever needed."""
    total = 0
    try:
        data, _ = _read_proc(f"/proc/{pid}/status")
        for key in (b"\nRssAnon:", b"\nRssShmem:"):
            at = data.find(key)
            if at >= 0:  # absent for a kernel thread or a zombie: it holds nothing
                total += int(data[at + len(key):data.index(b"kB", at)]) * 1024
    except (OSError, ValueError):
        return 0
    return total


def _read_proc(path: str) -> tuple[bytes, int]:
    """The text of a ``/proc`` file (they are far shorter than the buffer) and its owner's uid."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 16384), os.fstat(fd).st_uid
    finally:
        os.close(fd)


def _tmpfs_used(pids: set[int]) -> int:
    """Bytes the sandbox's private ``/tmp`` and ``/dev/shm`` hold, seen through one of its processes
    that lives in the sandbox's own mounts (bwrap's outer process sees the host's)."""
    host = {os.stat(f"/{folder}").st_dev for folder in ("tmp", "dev/shm") if os.path.isdir(f"/{folder}")}
    for pid in sorted(pids, reverse=True):
        total = 0
        for folder in ("tmp", "dev/shm"):
            path = f"/proc/{pid}/root/{folder}"
            try:
                if os.stat(path).st_dev in host:
                    break
                info = os.statvfs(path)
            except OSError:
                break
            total += (info.f_blocks - info.f_bfree) * info.f_frsize
        else:
            return total
    return 0


@functools.cache
def _remove_stale_groups_once(parent: Path) -> None:
    """Remove the empty groups a killed run left below ``parent`` (once per process): a group
    whose creator is gone; one still in use is busy and stays."""
    for group in parent.glob(f"{GROUP_PREFIX}*"):
        creator = group.name.removeprefix(GROUP_PREFIX).partition("-")[0]
        if creator.isdigit() and not Path(f"/proc/{creator}").exists():
            with contextlib.suppress(OSError):
                group.rmdir()
