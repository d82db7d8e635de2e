"""Text from untrusted places made safe to print on a terminal.

Task ids, file names, stored errors and agent output can hold characters a terminal acts on
instead of showing: ANSI escapes (``\\x1b[…``), carriage returns that overwrite a line, and
bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE makes ``evil‮txt.exe`` read as
``evilexe.txt``). :func:`terminal_safe` shows each of them as a visible ``\\uXXXX`` escape;
every place that prints such text to the terminal goes through it.
"""

from __future__ import annotations

__all__ = ["terminal_safe"]


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def terminal_safe(text: object, *, keep_newlines: bool = False) -> str:
    """``text`` (``str()`` of it) with every non-printable character (controls, format
    characters such as the bidirectional ones, separators other than the space) escaped;
    ``keep_newlines`` leaves ``\\n`` as it is (for multi-line messages)."""
    value = str(text)
    if value.isprintable():
        return value
    return "".join(ch if ch.isprintable() or (keep_newlines and ch == "\n") else _escape(ch) for ch in value)
