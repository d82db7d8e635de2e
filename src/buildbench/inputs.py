"""The one reader for files the product reads: regular files only, bounded in bytes and per line.

Every command that reads a file a person or an agent chose (JSON, JSONL, IFC, meshes, images,
task packs, stores) goes through here, because ``open(path).read()`` on ``/dev/zero`` grows
until the process dies (``st_size`` is 0, so a size check alone lets it through), a FIFO blocks
``open`` forever, and a 2 GB "scene" costs twice that in memory. The reader:

- refuses what is not a regular file (a folder, a FIFO, a device, a socket) by ``stat``
  before opening, opens with ``O_NONBLOCK`` (a FIFO swapped in after the check cannot block
  the open) and checks ``fstat`` again on what it opened;
- stops at a byte cap counted while reading, not from ``st_size`` (``/proc`` files and files
  that grow report a size that is not what a read returns);
- caps each line of a line-oriented file, so a "line" of a gigabyte is refused at its first
  ``line_bytes`` bytes.

The caps are :mod:`buildbench.limits` (``BUILDBENCH_LIMIT_INPUT_FILE_BYTES``,
``BUILDBENCH_LIMIT_JSON_FILE_BYTES``, ``BUILDBENCH_LIMIT_LINE_BYTES``). A refusal is an
`InputFileError`: an ``OSError`` whose ``filename`` is the file and whose ``strerror`` says
what and, for text, on which line, so the CLI's existing handler prints it as one ``error:``
line with exit status 2, and code that already handles unreadable files handles it too.
"""

from __future__ import annotations

import errno
import gzip
import os
import stat
import zlib
from collections.abc import Iterator
from typing import BinaryIO

from buildbench.limits import limit

__all__ = ["InputFileError", "check_regular_file", "decode_text", "iter_lines", "not_utf8", "open_input", "read_bytes",
           "read_text"]

StrPath = str | os.PathLike[str]

#: Byte-order marks of the other Unicode encodings, UTF-32's first (its little-endian mark
#: begins with UTF-16's).
_FOREIGN_MARKS = ((b"\xff\xfe\0\0", "UTF-32 little-endian"), (b"\0\0\xfe\xff", "UTF-32 big-endian"),
                  (b"\xff\xfe", "UTF-16 little-endian"), (b"\xfe\xff", "UTF-16 big-endian"))
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class InputFileError(OSError):
    """A file the reader refuses: not a regular file, or over a byte or line limit."""

    def __init__(self, path: StrPath, problem: str, *, code: int = errno.EINVAL) -> None:
        super().__init__(code, problem, os.fspath(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _over(path: StrPath, what: str, cap: int, name: str | None) -> InputFileError:
    """``name`` is the limit the cap came from; None for a caller's fixed cap (no variable sets it)."""
    problem = (f"{what} over the {cap}-byte limit (BUILDBENCH_LIMIT_{name.upper()})" if name
               else f"{what} over the limit of {cap} bytes")
    return InputFileError(path, problem, code=errno.EFBIG)


def check_regular_file(path: StrPath, *, limit_name: str | None = None, max_bytes: int | None = None,
                       follow_symlinks: bool = True) -> os.stat_result:
    """``stat`` of ``path`` when it is a regular file (within ``max_bytes``, or the limit
    ``limit_name``, when either is given), else `InputFileError` saying what it is.

    For files opened by a library of their own (SQLite, ifcopenshell): call this before
    handing the path over. A missing file raises ``FileNotFoundError`` as ``os.stat`` does.
    """
    try:
        info = os.stat(path, follow_symlinks=follow_symlinks)
    except ValueError:  # os.stat's "embedded null byte" names no file
        raise InputFileError(repr(os.fspath(path)), "is not a path (it holds a NUL character)") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputFileError(path, f"is {_kind(info.st_mode)}, not a regular file")
    if max_bytes is not None or limit_name is not None:
        cap, name = _cap(max_bytes, limit_name or "input_file_bytes")
        if info.st_size > cap:
            raise _over(path, f"file is {info.st_size} bytes,", cap, name)
    return info


class _Bounded:
    """Reads from a file descriptor, refusing to go past ``cap`` bytes in total."""

    def __init__(self, path: StrPath, fh: BinaryIO, cap: int, name: str | None) -> None:
        self.path, self.fh, self.cap, self.name, self.seen = path, fh, cap, name, 0

    def read(self, n: int = -1) -> bytes:
        want = self.cap + 1 - self.seen if n < 0 else min(n, self.cap + 1 - self.seen)
        data = self.fh.read(max(want, 0))
        self.seen += len(data)
        if self.seen > self.cap:
            raise _over(self.path, "file is", self.cap, self.name)
        return data

    def readline(self, n: int) -> bytes:
        data = self.fh.readline(n)
        self.seen += len(data)
        if self.seen > self.cap:
            raise _over(self.path, "file is", self.cap, self.name)
        return data


def open_input(path: StrPath, *, follow_symlinks: bool = True) -> BinaryIO:
    """``path`` opened for binary reading, after checking it is a regular file (before and
    after opening). Use `read_bytes` or `iter_lines` unless a library needs a file object;
    then bound what it reads yourself.

    Args:
        follow_symlinks: False opens with ``O_NOFOLLOW`` (for paths inside a folder whose
            links must not lead elsewhere).
    """
    check_regular_file(path, follow_symlinks=follow_symlinks)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise InputFileError(path, "is a symbolic link, refused here") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # swapped between the check and the open
            raise InputFileError(path, f"is {_kind(info.st_mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _cap(max_bytes: int | None, limit_name: str) -> tuple[int, str | None]:
    """The cap in force and the limit it comes from (None: the caller's own ``max_bytes``)."""
    return (limit(limit_name), limit_name) if max_bytes is None else (max_bytes, None)


def read_bytes(path: StrPath, *, max_bytes: int | None = None, limit_name: str = "input_file_bytes",
               follow_symlinks: bool = True, gunzip: bool = False) -> bytes:
    """The whole file, refused past ``max_bytes`` (default: the limit ``limit_name``).

    Args:
        gunzip: The file is gzip-compressed: return its content, the cap bounding both the
            file and what it decompresses to (a small bomb is refused, not inflated).
    """
    cap, name = _cap(max_bytes, limit_name)
    check_regular_file(path, max_bytes=max_bytes, limit_name=limit_name, follow_symlinks=follow_symlinks)
    with open_input(path, follow_symlinks=follow_symlinks) as fh:
        if not gunzip:
            return _Bounded(path, fh, cap, name).read()
        try:
            with gzip.GzipFile(fileobj=fh) as unzipped:
                data = unzipped.read(cap + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputFileError(path, f"not a gzip file ({exc})") from None
        if len(data) > cap:
            raise _over(path, "decompressed content is", cap, name)
        return data


def not_utf8(data: bytes, *, at_start: bool = True) -> tuple[int, str] | None:
    """``(byte offset, why)`` when ``data`` (the start of a file when ``at_start``) is text in an
    encoding other tools write, which decodes wrongly or confusingly as UTF-8, else None: a UTF-16
    or UTF-32 byte-order mark (PowerShell 5 and Notepad write UTF-16; RFC 8259 allows UTF-8 only,
    so such a file is refused everywhere, with this reason, rather than read by guessing), or a NUL
    byte (UTF-16/32 without a mark: ASCII text decodes "fine" with a NUL after every letter, and
    the parser's complaint names no cause). ``why`` reads after a subject: "(line 1) starts with
    ...". Invalid UTF-8 itself is left to the decoder."""
    if at_start:
        for mark, name in _FOREIGN_MARKS:
            if data.startswith(mark):
                return 0, f"starts with a {name} byte-order mark: save the file as UTF-8"
    at = data.find(b"\0")
    if at < 0:
        return None
    return at, "holds a NUL byte: UTF-16 or UTF-32 text without a byte-order mark, or not text at all"


def decode_text(path: StrPath, data: bytes, first_line: int = 1) -> str:
    """``data`` (of ``path``, from line ``first_line``) as UTF-8 text; `InputFileError` naming the
    line when it is not (`not_utf8`, or bytes UTF-8 does not allow). A byte-order mark is kept."""
    foreign = not_utf8(data, at_start=first_line == 1)
    if foreign:
        line = first_line + data.count(b"\n", 0, foreign[0])
        raise InputFileError(path, f"not UTF-8 text (line {line} {foreign[1]})")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        raise InputFileError(path, f"not UTF-8 text (line {line}, byte 0x{data[exc.start]:02x})") from None


def read_text(path: StrPath, *, max_bytes: int | None = None, limit_name: str = "json_file_bytes",
              follow_symlinks: bool = True) -> str:
    """The whole file as UTF-8 text (a byte-order mark dropped), bounded as `read_bytes`;
    text that is not UTF-8 is refused naming its line."""
    data = read_bytes(path, max_bytes=max_bytes, limit_name=limit_name, follow_symlinks=follow_symlinks)
    return decode_text(path, data).removeprefix("\ufeff")


def iter_lines(path: StrPath, *, max_bytes: int | None = None, limit_name: str = "json_file_bytes",
               max_line_bytes: int | None = None, follow_symlinks: bool = True) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for each line (newline removed), holding one line at a time.

    A line longer than ``max_line_bytes`` (default: the limit ``line_bytes``) or not UTF-8 is
    refused naming its number; the file as a whole is bounded as `read_bytes`.
    """
    cap, name = _cap(max_bytes, limit_name)
    line_cap, line_name = _cap(max_line_bytes, "line_bytes")
    check_regular_file(path, max_bytes=max_bytes, limit_name=limit_name, follow_symlinks=follow_symlinks)
    with open_input(path, follow_symlinks=follow_symlinks) as fh:
        reader = _Bounded(path, fh, cap, name)
        number = 0
        while True:
            raw = reader.readline(line_cap + 1)
            if not raw:
                return
            number += 1
            if len(raw) > line_cap and not raw.endswith(b"\n"):
                raise _over(path, f"line {number} is", line_cap, line_name)
            text = decode_text(path, raw, number).rstrip("\r\n")
            yield number, text.removeprefix("\ufeff") if number == 1 else text

