"""JSON files as other tools write them, for the hostile-encoding tests of the harness's readers
(test_hostile_encodings.py) and of the suites' own readers (test_hostile_encodings_suites.py):
each variant turns a file's UTF-8 text into the bytes a user could hand over, with the words the
one ``error:`` line must hold where the variant is refused; and the helpers that run a command.

Imported relatively (``from .json_variants import ...``): pytest runs with ``--import-mode=importlib``,
under which a test file's folder is not on ``sys.path``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from buildbench.cli.main import main


def repeat_first_key(text: str) -> str:
    """``text`` with the first key of the first object whose first value is a string or number
    given twice (its value the same: only the repeat differs)."""
    found = re.search(r'\{\s*("[^"]*")\s*:\s*("[^"]*"|-?[\d.]+)', text)
    assert found, text[:200]
    return text[:found.start()] + "{" + found.group(1) + ": " + found.group(2) + ", " + text[found.start() + 1:]


def trailing_comma(text: str) -> str:
    """``text`` with a comma after the last value of its outermost array or object."""
    end = text.rstrip().rstrip("}]")
    return end + "," + text[len(end):]


#: Variant -> the bytes of the file, given its UTF-8 text: read as the same JSON.
SAME: dict[str, Callable[[str], bytes]] = {
    "UTF-8 byte-order mark": lambda t: b"\xef\xbb\xbf" + t.encode(),
    "CRLF line ends": lambda t: t.replace("\n", "\r\n").encode(),
    "no final newline": lambda t: t.rstrip("\n").encode(),
    "blank lines": lambda t: t.replace("\n", "\n\n\r\n").encode() + b"  \n",
}

#: Variant -> (the bytes of the file, what the error line says), for the variants that are refused
#: the same way whatever the reader (numbers are not: where a test puts NaN depends on its files).
REFUSED: dict[str, tuple[Callable[[str], bytes], str]] = {
    "UTF-16 with a byte-order mark": (lambda t: t.encode("utf-16"), "starts with a UTF-16 little-endian byte-order mark"),
    "UTF-16 big-endian with a byte-order mark": (lambda t: b"\xfe\xff" + t.encode("utf-16-be"),
                                                 "starts with a UTF-16 big-endian byte-order mark"),
    "UTF-32 with a byte-order mark": (lambda t: t.encode("utf-32"), "starts with a UTF-32 little-endian byte-order mark"),
    "UTF-32 big-endian with a byte-order mark": (lambda t: b"\0\0\xfe\xff" + t.encode("utf-32-be"),
                                                 "starts with a UTF-32 big-endian byte-order mark"),
    "UTF-16 without a byte-order mark": (lambda t: t.encode("utf-16-le"),
                                         "holds a NUL byte: UTF-16 or UTF-32 text without a byte-order mark"),
    "trailing comma": (lambda t: trailing_comma(t).encode(), ""),
    "a key given twice": (lambda t: repeat_first_key(t).encode(), "given twice"),  # YAML run files: no "in one object"
}


def fill(argv: list[str], path: Path, folder: Path) -> list[str]:
    """``argv`` with ``{F}`` the file under test and ``{T}`` the test's folder."""
    return [a.replace("{F}", str(path)).replace("{T}", str(folder)) for a in argv]


def call(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit status, standard output and standard error of ``buildbench argv`` run in this process."""
    rc = main(argv)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err
