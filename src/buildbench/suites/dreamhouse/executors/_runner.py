"""Run one agent script in a fresh namespace and report how it ended; frame helpers.

Standard library only: the Blender driver loads this file by path inside Blender's own
Python (which has no buildbench dependencies), and the fast executor's sandboxed child
imports it normally. Both executors therefore report errors in exactly the same way.
"""

from __future__ import annotations

import builtins
import json
import linecache
import os
import struct
import traceback
from typing import Any

#: File name agent code is compiled under; tracebacks show it.
CODE_FILENAME = "<agent code>"
_HEADER = struct.Struct(">I")
_MAX_TRACEBACK_CHARS = 20_000


def _trimmed_traceback(exc: BaseException) -> str:
    """The traceback without the leading frames of this module."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    return text if len(text) <= _MAX_TRACEBACK_CHARS else text[-_MAX_TRACEBACK_CHARS:]


def run_script(code: str) -> dict[str, Any]:
    """Execute ``code`` as a fresh ``__main__`` script.

    Returns:
        ``{"status": "ok"|"error", "error": "ExcType: message"|None, "traceback": str|None}``.
        ``sys.exit(0)``/``sys.exit()`` count as a normal end. ``MemoryError`` and
        ``KeyboardInterrupt`` propagate so the sandbox can classify them.
    """
    linecache.cache[CODE_FILENAME] = (len(code), None, code.splitlines(keepends=True), CODE_FILENAME)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins, "__file__": CODE_FILENAME}
    try:
        exec(compile(code, CODE_FILENAME, "exec"), namespace)
    except (MemoryError, KeyboardInterrupt):
        raise
    except SystemExit as exc:
        if exc.code not in (None, 0):
            return {
                "status": "error",
                "error": f"SystemExit: {exc.code}",
                "traceback": _trimmed_traceback(exc),
            }
    except BaseException as exc:  # everything agent code raises is its result, not ours
        message = str(exc)
        error = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
        return {"status": "error", "error": error, "traceback": _trimmed_traceback(exc)}
    return {"status": "ok", "error": None, "traceback": None}


def write_frame(fd: int, value: Any) -> None:
    """Send one length-prefixed JSON frame."""
    data = json.dumps(value).encode("utf-8")
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def read_frame(fd: int) -> Any:
    """Receive one frame; None when the other end closed the pipe."""
    header = _read_exact(fd, _HEADER.size)
    if header is None:
        return None
    body = _read_exact(fd, _HEADER.unpack(header)[0])
    if body is None:
        return None
    return json.loads(body.decode("utf-8"))


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = os.read(fd, n - len(chunks))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)
