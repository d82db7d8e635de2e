"""Reading files that untrusted code could have touched.

Agent code owns its work folder: it can replace the file the harness expects with a link to
``/etc/shadow``, a FIFO that blocks every reader, ``/dev/zero``, a hard link to a file of
someone else's, or a file of many gigabytes. The harness (often root) reads such files only
through :func:`read_agent_file`, which opens the name relative to a folder descriptor without
following links, accepts regular files with one link only, and reads at most a cap; it removes
them through :func:`remove_tree`, which reaches any depth and never follows a link.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from buildbench.sandbox._tree import remove_tree

__all__ = ["AgentFileError", "read_agent_file", "remove_tree"]

_CHUNK = 1 << 20


class AgentFileError(OSError):
    """An agent-writable file that may not be read: missing, not a plain file, or too large."""


def read_agent_file(path: str | os.PathLike[str], *, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, never following a link.

    Every folder on the way is opened with ``O_NOFOLLOW`` too, so a folder the agent swapped
    for a link cannot redirect the read.

    Raises:
        AgentFileError: When ``path`` is missing, a link, not a regular file, hard-linked
            elsewhere (more than one name), or larger than ``max_bytes``. The message names it.
    """
    p = Path(os.path.abspath(path))
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        folder = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise AgentFileError(f"{p}: cannot open /: {exc.strerror}") from None
    try:
        for part in p.parts[1:-1]:
            try:
                nxt = os.open(part, flags | os.O_DIRECTORY, dir_fd=folder)
            except OSError as exc:
                raise AgentFileError(f"{p}: folder {part!r} cannot be opened without following links "
                                     f"({exc.strerror})") from None
            os.close(folder)
            folder = nxt
        try:
            # O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
            fd = os.open(p.name, flags | os.O_NONBLOCK, dir_fd=folder)
        except OSError as exc:
            reason = "it is a symbolic link" if exc.errno == 40 else exc.strerror  # ELOOP
            raise AgentFileError(f"{p}: cannot be read ({reason})") from None
    finally:
        os.close(folder)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise AgentFileError(f"{p}: not a regular file ({_kind(info.st_mode)})")
        if info.st_nlink != 1:
            raise AgentFileError(f"{p}: has {info.st_nlink} names (a hard link to another file is not read)")
        if info.st_size > max_bytes:
            raise AgentFileError(f"{p}: {info.st_size} bytes, over the {max_bytes}-byte limit")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:  # it grew while we read
                raise AgentFileError(f"{p}: grew past the {max_bytes}-byte limit while being read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"
