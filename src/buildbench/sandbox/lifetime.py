"""Nothing outlives the run: processes die with their parent, leftover work folders are removed.

- `die_with_run` is the initializer of the runner's worker processes: each dies when the
  forkserver that forked it dies (``PR_SET_PDEATHSIG``) and takes the forkserver down when
  the run's main process dies, even on ``kill -9`` (a thread waits on a pidfd of the main
  process). The resource tracker then sees its last writer gone and exits too. Sandboxes
  die with the process that started them (bwrap's ``--die-with-parent``, or the same
  PR_SET_PDEATHSIG in the sandbox's supervisor).
- A `Worker` holds a shared ``flock`` on its work folder while it lives; `clean_stale_workdirs`
  removes work folders in the temp folder that nobody holds and nobody touched for a while,
  the remains of a run that was killed before it could clean up.
"""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import tempfile
import threading
import time
from pathlib import Path

from buildbench.sandbox._prctl import die_with_parent
from buildbench.sandbox._tree import remove_tree

__all__ = ["STALE_PREFIXES", "clean_stale_workdirs", "die_with_run", "lock_workdir"]

_log = logging.getLogger(__name__)

#: Name prefixes of the work folders sandboxes and suites create in the temp folder.
STALE_PREFIXES = ("buildbench-sandbox-", "bimedit-")
#: Scratch folders that share a prefix but no `Worker` locks (BIM-Edit's scorer): never touched.
UNLOCKED_PREFIXES = ("bimedit-score-",)


def lock_workdir(folder: str | os.PathLike[str]) -> int:
    """Hold a shared lock on ``folder`` until the returned descriptor is closed: it is in use."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError:
        os.close(fd)
        raise
    return fd


def _unused(folder: Path) -> bool:
    """True when no process holds ``folder``'s lock (this takes it for a moment)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # closing releases the lock


def clean_stale_workdirs(temp_dir: str | os.PathLike[str] | None = None, *, min_age_s: float = 60.0,
                         prefixes: tuple[str, ...] = STALE_PREFIXES) -> list[Path]:
    """Remove work folders left by runs that were killed; return those removed.

    A folder is removed when its name starts with one of ``prefixes``, it is a real folder
    (not a link), no live `Worker` holds its lock, and it was last modified more than
    ``min_age_s`` seconds ago (a folder just created is locked only a moment later).
    """
    root = Path(temp_dir or tempfile.gettempdir())
    removed: list[Path] = []
    now = time.time()
    try:
        candidates = [p for p in root.iterdir()
                      if p.name.startswith(prefixes) and not p.name.startswith(UNLOCKED_PREFIXES)]
    except OSError:
        return removed
    for folder in candidates:
        try:
            info = folder.lstat()
        except OSError:
            continue
        if not folder.is_dir() or folder.is_symlink() or now - info.st_mtime < min_age_s:
            continue
        if not _unused(folder):
            continue
        if not remove_tree(folder):
            _log.warning("could not remove the leftover work folder %s", folder)
        else:
            removed.append(folder)
    return removed


def _watch_main(main_pid: int) -> None:
    """Wait for the main process to end, then end the forkserver (our parent) and this process."""
    try:
        pidfd = os.pidfd_open(main_pid)
    except ProcessLookupError:
        pidfd = None
    if pidfd is not None:
        import select

        select.select([pidfd], [], [])
    forkserver = os.getppid()
    if forkserver != 1:
        try:
            os.kill(forkserver, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os.kill(os.getpid(), signal.SIGKILL)


def die_with_run(main_pid: int) -> None:
    """Initializer of a process-pool worker: end with the forkserver and with ``main_pid``."""
    die_with_parent()
    threading.Thread(target=_watch_main, args=(main_pid,), name="die-with-run", daemon=True).start()
