"""Draining a child's stdout or stderr pipe with a size cap and per-call end markers."""

from __future__ import annotations

import os
import threading
from typing import NamedTuple

_CHUNK_BYTES = 1 << 16


class Captured(NamedTuple):
    """Output kept for one call."""

    text: str
    truncated: bool


class StreamCollector:
    """Reads one pipe on a daemon thread until end-of-file.

    The pipe is always drained, so a child printing without end never blocks on a
    full pipe, but only ``cap_bytes`` per call are stored; the rest is counted and
    dropped. `begin` starts a call with a fresh marker; bytes up to that marker
    belong to the call, bytes after it are dropped until the next `begin`.
    """

    def __init__(self, fd: int, cap_bytes: int) -> None:
        self._fd = fd
        self._cap = cap_bytes
        self._lock = threading.Lock()
        self._marker_seen = threading.Event()
        self._marker = b""
        self._pending = b""
        self._kept = bytearray()
        self._dropped = 0
        self._collecting = True
        self._closed = False
        self._thread = threading.Thread(target=self._drain, name=f"sandbox-stream-{fd}", daemon=True)
        self._thread.start()

    def begin(self, marker: bytes) -> None:
        """Start a new call: forget earlier output and watch for ``marker``."""
        with self._lock:
            self._marker = marker
            self._pending = b""
            self._kept = bytearray()
            self._dropped = 0
            self._collecting = True
            if not self._closed:
                self._marker_seen.clear()

    def wait_for_marker(self, timeout_s: float) -> bool:
        """Wait until the current call's marker went by (or the pipe closed)."""
        return self._marker_seen.wait(timeout_s)

    def take(self) -> Captured:
        """The current call's output so far, decoded as UTF-8 (bad bytes replaced)."""
        with self._lock:
            kept = bytes(self._kept)
            if self._collecting:
                # The marker never came (the child died): what is still held back is output too.
                kept = (kept + self._pending)[: self._cap]
            return Captured(kept.decode("utf-8", errors="replace"), self._dropped > 0)

    def join(self, timeout_s: float) -> None:
        """Wait for the reader thread to reach end-of-file."""
        self._thread.join(timeout_s)

    def _store(self, data: bytes) -> None:
        room = self._cap - len(self._kept)
        self._kept += data[:room]
        self._dropped += max(0, len(data) - room)

    def _feed(self, chunk: bytes) -> None:
        with self._lock:
            if not self._collecting:
                return
            data = self._pending + chunk
            index = data.find(self._marker) if self._marker else -1
            if index >= 0:
                self._store(data[:index])
                self._pending = b""
                self._collecting = False
                self._marker_seen.set()
                return
            # Hold back a tail that could be the start of a marker split across reads.
            hold = min(len(data), max(len(self._marker) - 1, 0))
            self._store(data[: len(data) - hold])
            self._pending = data[len(data) - hold :]

    def _drain(self) -> None:
        try:
            while True:
                chunk = os.read(self._fd, _CHUNK_BYTES)
                if not chunk:
                    break
                self._feed(chunk)
        except OSError:
            pass
        finally:
            os.close(self._fd)
            with self._lock:
                self._closed = True
                self._marker_seen.set()
