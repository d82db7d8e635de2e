"""Record/replay of model calls, so any run can be replayed offline bit for bit.

Each call is keyed by the SHA-256 of the canonical JSON of (provider, model, request,
occurrence), where ``occurrence`` counts how often this same request was already asked in
this run: sampling the same prompt n times at temperature > 0 records n entries and replays
them in the same order. The file is JSON Lines, one call per line, appended and flushed as
each call returns.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from buildbench.inputs import iter_lines
from buildbench.jsonio import parse_json

from .client import ChatModel, LLMConfigError
from .types import ApiError, ChatRequest, ChatResponse, canonical_json

CacheMode = Literal["record", "replay", "auto"]
FORMAT_VERSION = 1


def request_hash(provider: str, model: str, request: ChatRequest) -> str:
    """SHA-256 hex of a request as one model sees it, before occurrence numbering."""
    text = canonical_json({"provider": provider, "model": model, "request": request.to_dict()})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(base_hash: str, occurrence: int) -> str:
    """The key of the ``occurrence``-th (0-based) asking of the request ``base_hash``."""
    return hashlib.sha256(f"{base_hash}:{occurrence}".encode("ascii")).hexdigest()


def load_entries(path: Path) -> dict[str, dict[str, Any]]:
    """Recorded responses by key (the last line wins for a repeated key).

    A final line without a newline is a write cut short by a crash: it is skipped with a
    warning. Any other unreadable line is an error naming the file and line.
    """
    entries: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return entries
    failed: tuple[int, Exception] | None = None
    last_line = 0
    for number, line in iter_lines(path, limit_name="input_file_bytes"):
        last_line = number
        if failed is not None:  # a bad line with more after it
            break
        if not line.strip():
            continue
        try:
            record = parse_json(line, unique_keys=True)
            entries[str(record["key"])] = record["response"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            failed = (number, exc)
    if failed is not None:
        number, problem = failed
        if number == last_line and _torn_tail(path):  # no newline after it: torn final write
            warnings.warn(f"{path}:{number}: ignoring an incomplete last line", stacklevel=2)
        else:
            raise ValueError(f"{path}:{number}: not a record/replay entry ({problem})") from problem
    return entries


class RecordReplay(ChatModel):
    """Wraps a model to record its calls to a JSONL file, or to answer from one.

    Args:
        path: The JSONL file (created on first record).
        inner: The live model; may be None in ``replay`` mode.
        mode: ``record`` always calls ``inner`` and appends; ``replay`` only answers from
            the file (a miss is a ``replay_miss`` error naming the key); ``auto`` answers
            from the file when it can and records otherwise.
        provider: Provider name for keys; defaults to ``inner.provider``.
        model: Model name for keys; defaults to ``inner.model``.

    Replayed responses equal the recorded ones field for field, except ``cached=True``.
    """

    def __init__(
        self,
        path: str | Path,
        inner: ChatModel | None = None,
        mode: CacheMode = "auto",
        provider: str | None = None,
        model: str | None = None,
    ) -> None:
        if mode not in ("record", "replay", "auto"):
            raise LLMConfigError(f"RecordReplay.mode: expected 'record', 'replay' or 'auto', got {mode!r}")
        if inner is None and mode != "replay":
            raise LLMConfigError(f"RecordReplay: mode {mode!r} needs a live model to call (inner=None)")
        if inner is None and (provider is None or model is None):
            raise LLMConfigError(
                "RecordReplay: without inner, pass provider= and model= (they are part of the key)"
            )
        self.path = Path(path)
        self.inner = inner
        self.mode = mode
        self.provider = provider or (inner.provider if inner else "")
        self.model = model or (inner.model if inner else "")
        self._entries = load_entries(self.path) if mode != "record" else {}
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        # A torn last line from an earlier crash must not swallow the next record.
        self._needs_newline = _torn_tail(self.path)
        self.hits = 0
        self.misses = 0

    def _next_key(self, request: ChatRequest) -> tuple[str, int]:
        base = request_hash(self.provider, self.model, request)
        with self._lock:
            occurrence = self._seen[base]
            self._seen[base] += 1
        return cache_key(base, occurrence), occurrence

    def _append(self, key: str, occurrence: int, response: ChatResponse) -> None:
        line = canonical_json(
            {
                "v": FORMAT_VERSION,
                "key": key,
                "occurrence": occurrence,
                "provider": self.provider,
                "model": self.model,
                "response": response.to_dict(),
            }
        )
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(("\n" if self._needs_newline else "") + line + "\n")
            self._needs_newline = False
            self._entries[key] = response.to_dict()

    async def generate(self, request: ChatRequest) -> ChatResponse:
        key, occurrence = self._next_key(request)
        if self.mode != "record" and key in self._entries:
            self.hits += 1
            return dataclasses.replace(ChatResponse.from_dict(self._entries[key]), cached=True)
        self.misses += 1
        if self.inner is None or self.mode == "replay":
            err = ApiError(
                "replay_miss",
                f"no recorded response in {self.path} for key {key} (occurrence {occurrence} of this request); "
                "the request differs from the recorded run or this run went further",
            )
            return ChatResponse.failure(err, self.model)
        response = await self.inner.generate(request)
        self._append(key, occurrence, response)
        return response

    async def aclose(self) -> None:
        if self.inner is not None:
            await self.inner.aclose()


def _torn_tail(path: Path) -> bool:
    """True when ``path`` exists, is not empty and does not end in a newline."""
    if not path.exists() or path.stat().st_size == 0:
        return False
    with path.open("rb") as f:
        f.seek(-1, 2)
        return f.read(1) != b"\n"
