"""Walking a folder that untrusted code shaped, at any depth, never following a link.

Agent code can nest folders far deeper than Python's recursion limit (``os.walk`` and
``shutil.rmtree`` recurse) and build paths far longer than ``PATH_MAX`` (a path-based walk
fails with ``ENAMETOOLONG``). `walk` therefore moves by folder descriptors only (``openat``
with ``O_NOFOLLOW``), keeps its own stack, and holds `HELD_FDS` folders open at most (two
descriptors each, the folder and its listing): a folder deeper than that is reached again
through ``..`` of its child, checked to be the same folder. It is used to measure, hand over
and remove work folders (`_disk`, `_launch`, `remove_tree`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field

__all__ = ["HELD_FDS", "TreeChanged", "remove_tree", "walk"]

#: The most folders a walk holds open at once, whatever the depth.
HELD_FDS = 64
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class TreeChanged(OSError):
    """A folder moved while a deep walk was inside it: going up did not lead back to its parent."""


def _listing(fd: int) -> Generator[str, None, None]:
    """The names in the folder ``fd``, read as they are needed: a walk that stops early (a
    quota passed) does not list a folder of a million entries first."""
    with os.scandir(fd) as entries:
        for entry in entries:
            yield entry.name


@dataclass
class _Frame:
    fd: int | None
    identity: tuple[int, int]
    names: Iterator[str]
    name: str = ""
    info: os.stat_result | None = field(default=None, repr=False)

    def release(self) -> None:
        """Close the folder (its remaining names are kept in memory)."""
        rest = list(self.names)
        close = getattr(self.names, "close", None)
        if close is not None:
            close()
        self.names = iter(rest)
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _open_dir(name: str, dir_fd: int, open_up: bool) -> int | None:
    """``name`` in ``dir_fd`` opened as a folder; None when it is gone or no longer a folder."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except PermissionError:
        if not open_up:
            raise
    # Code in the sandbox may leave a folder at mode 000; its own uid is ours, so open it up.
    try:
        os.chmod(name, 0o700, dir_fd=dir_fd, follow_symlinks=False)
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _close(frames: list[_Frame]) -> None:
    for frame in frames:
        close = getattr(frame.names, "close", None)
        if close is not None:
            close()
        if frame.fd is not None:
            os.close(frame.fd)
            frame.fd = None


def walk(root: str, *, open_up: bool = False) -> Iterator[tuple[int, str, os.stat_result]]:
    """Every entry below ``root`` as ``(descriptor of its folder, name, lstat)``, a folder after its contents.

    The descriptor is valid until the next step, so the caller may ``unlink``/``rmdir``/``chown``
    the entry through it. Links are reported, never followed; folders on another device are
    reported but not entered. An entry that vanishes while the walk runs is skipped.

    Args:
        root: The folder to walk (itself not reported); a link there is refused.
        open_up: Make a folder its owner cannot list (mode 000) listable instead of raising.

    Raises:
        TreeChanged: A folder more than `HELD_FDS` levels deep moved during the walk.
        OSError: ``root`` cannot be opened, or a folder cannot be listed (``PermissionError``).
    """
    fd = os.open(root, _DIR_FLAGS)
    top = os.fstat(fd)
    frames = [_Frame(fd, (top.st_dev, top.st_ino), iter(()))]
    try:
        frames[0].names = _listing(fd)
        while frames:
            frame = frames[-1]
            assert frame.fd is not None
            name = next(frame.names, None)
            if name is not None:
                try:
                    info = os.stat(name, dir_fd=frame.fd, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if not stat.S_ISDIR(info.st_mode) or info.st_dev != top.st_dev:
                    yield frame.fd, name, info
                    continue
                child = _open_dir(name, frame.fd, open_up)
                if child is None:
                    continue
                # What was opened may differ from what was measured if it was just replaced.
                info = os.fstat(child)
                frames.append(_Frame(child, (info.st_dev, info.st_ino), _listing(child), name, info))
                if len(frames) > HELD_FDS:
                    frames[-HELD_FDS - 1].release()
                continue
            frames.pop()
            if not frames:
                _close([frame])
                return
            parent = frames[-1]
            try:
                if parent.fd is None:
                    parent.fd = os.open("..", _DIR_FLAGS, dir_fd=frame.fd)
                    again = os.fstat(parent.fd)
                    if (again.st_dev, again.st_ino) != parent.identity:
                        raise TreeChanged(f"{root}: a folder moved while it was walked")
            finally:
                _close([frame])
            assert frame.info is not None
            yield parent.fd, frame.name, frame.info
    finally:
        _close(frames)


def remove_tree(root: str | os.PathLike[str]) -> bool:
    """Remove the folder ``root`` and everything in it, never following a link; True when it is gone.

    Nothing is raised: what cannot be removed (another device mounted inside, a folder moved
    away while it was removed) stays, and False says so. A link at ``root`` is removed itself.
    """
    path = os.fspath(root)
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return True
        os.chmod(path, 0o700, follow_symlinks=False)  # the code may have closed its own folder
        for dir_fd, name, info in walk(path, open_up=True):
            try:
                if stat.S_ISDIR(info.st_mode):
                    os.rmdir(name, dir_fd=dir_fd)
                else:
                    os.unlink(name, dir_fd=dir_fd)
            except FileNotFoundError:
                continue
            except OSError:
                pass  # a folder left non-empty: the rmdir of its parent fails too, and False says so
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return not os.path.lexists(path)
    return True
