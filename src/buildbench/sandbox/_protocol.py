"""Length-prefixed JSON frames over raw pipe file descriptors.

The parent and the sandboxed child talk over two dedicated pipes, never over
stdout/stderr, which belong to the user's code. A frame is a 4-byte big-endian
length followed by that many bytes of UTF-8 JSON.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time

# Not `typing.TYPE_CHECKING`: importing typing would cost every sandboxed child's start-up.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any

_HEADER = struct.Struct(">I")


class ProtocolError(Exception):
    """The other side sent something that is not a valid frame."""


class FrameTimeout(Exception):
    """No complete frame arrived before the deadline."""


def write_frame(fd: int, message: dict[str, Any]) -> None:
    """Write one JSON frame to ``fd``, blocking until all of it is written.

    Raises:
        BrokenPipeError: The reading side is gone.
    """
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    data = memoryview(_HEADER.pack(len(body)) + body)
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes | None:
    """Read exactly ``size`` bytes; None on end-of-file before the first byte."""
    chunks: list[bytes] = []
    remaining = size
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    while remaining:
        if deadline is not None:
            wait_s = deadline - time.monotonic()
            if wait_s <= 0 or not poller.poll(wait_s * 1000.0):
                raise FrameTimeout(
                    f"no complete frame within the deadline ({size - remaining}/{size} bytes read)"
                )
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            if remaining == size:
                return None
            raise ProtocolError(
                f"pipe closed in the middle of a frame ({size - remaining}/{size} bytes read)"
            )
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, *, max_bytes: int, deadline: float | None = None) -> dict[str, Any] | None:
    """Read one JSON frame from ``fd``.

    Args:
        fd: The pipe to read.
        max_bytes: Largest body accepted; a larger announced length is a protocol error.
        deadline: ``time.monotonic()`` value after which to give up; None waits forever.

    Returns:
        The decoded JSON object, or None when the pipe reached end-of-file cleanly.

    Raises:
        FrameTimeout: The deadline passed first.
        ProtocolError: The frame is oversized, cut short, or not a JSON object.
    """
    header = _read_exact(fd, _HEADER.size, deadline)
    if header is None:
        return None
    (length,) = _HEADER.unpack(header)
    if length > max_bytes:
        raise ProtocolError(f"frame of {length} bytes exceeds the {max_bytes}-byte limit")
    body = _read_exact(fd, length, deadline) if length else b""
    if body is None:
        raise ProtocolError("pipe closed between a frame header and its body")
    try:
        message = json.loads(body.decode("utf-8"))
    # ValueError: malformed JSON, bad UTF-8 or an integer of over 4,300 digits; the other side
    # may be the agent's process, so deep nesting (RecursionError) is its error too.
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"frame is not valid UTF-8 JSON: {exc}") from exc
    if not isinstance(message, dict):
        raise ProtocolError(f"frame is a JSON {type(message).__name__}, expected an object")
    return message


def field_problem(frame: Any, fields: dict[str, tuple[type, ...]]) -> str | None:
    """What is wrong with the fields of ``frame``, a JSON value the other side sent, or None:
    ``an array, not an object``, ``an unknown field 'x'`` (one ``fields`` does not list) or
    ``field 'x' is a string`` (a value of none of its types; a boolean passes only where
    ``bool`` is listed, never as an ``int``). Whatever else a frame must hold is the caller's
    to check."""
    if not isinstance(frame, dict):
        return f"{_json_kind(frame)}, not an object"
    for key, value in frame.items():
        allowed = fields.get(key)
        if allowed is None:
            return f"an unknown field {key!r}"
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            return f"field {key!r} is {_json_kind(value)}"
    return None


def _json_kind(value: Any) -> str:
    kinds = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), "a number")
