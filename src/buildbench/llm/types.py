"""Provider-neutral chat types: messages, tools, requests, responses, usage, errors.

Every type converts to and from plain JSON (``to_dict`` / ``from_dict``) without loss, because
requests are hashed for the record/replay cache and responses go into episode logs and
replay files. Content parts (text, PNG images) live in :mod:`.parts`.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from buildbench.jsonio import parse_json

from .parts import ImagePart, Part, TextPart, part_from_dict, require_field

Role = Literal["system", "user", "assistant", "tool"]
ErrorKind = Literal["api_error", "timeout", "budget", "replay_miss", "context_length"]

_ROLES: tuple[str, ...] = get_args(Role)
_ERROR_KINDS: tuple[str, ...] = get_args(ErrorKind)


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with each lone surrogate (U+D800-U+DFFF) replaced by U+FFFD. A reply's JSON may
    hold one (``"\\ud800"``), which no UTF-8 writer can write: the next request's body, the
    store, a replay file or a log would each fail on it."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("\ufffd", text)


def token_count(value: Any, where: str) -> int:
    """A token count a server reported (None: 0).

    Raises:
        ValueError: ``value`` is not a whole number from 0 to 2**53 (a negative count would lower
            the budget's running total; a bool, string, NaN or fraction is no count, and past
            2**53 a float no longer counts by ones: 1e300 tokens is no answer to any request).
    """
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 2**53 \
            or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(f"{where}: expected a token count, got {value!r:.40}")
    return int(value)


def canonical_json(value: Any) -> str:
    """JSON text with sorted keys and no spaces: the same value always gives the same bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


@dataclass(frozen=True)
class ToolCall:
    """A function call requested by the model.

    Attributes:
        id: The provider's call id; the tool result message must quote it.
        name: The tool's name.
        arguments: The parsed JSON object ({} when the arguments could not be parsed).
        raw_arguments: The arguments exactly as the model wrote them.
        parse_error: Why ``raw_arguments`` is not a JSON object, or None when it is.
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw_arguments: str = "{}"
    parse_error: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", valid_text(self.name))
        object.__setattr__(self, "raw_arguments", valid_text(self.raw_arguments))
        if self.arguments:  # "\\udc00" in valid JSON reads as a lone surrogate
            try:
                text = json.dumps(self.arguments, ensure_ascii=False)
            except (TypeError, ValueError, RecursionError):
                return  # not JSON (a Python caller's object): nothing a reply could have put there
            if valid_text(text) is not text:
                object.__setattr__(self, "arguments", json.loads(valid_text(text)))

    @classmethod
    def parse(cls, id: str, name: str, raw: str | dict[str, Any] | Any) -> ToolCall:
        """Build from what a provider sent, flagging malformed arguments instead of raising."""
        if isinstance(raw, dict):
            return cls(id, name, raw, json.dumps(raw, ensure_ascii=False))
        if not isinstance(raw, str):
            text = json.dumps(raw, ensure_ascii=False)
            return cls(id, name, {}, text, f"arguments must be a JSON object, got {type(raw).__name__}")
        if not raw.strip():
            return cls(id, name, {}, raw)  # servers send "" for tools without parameters
        try:
            value = parse_json(raw)
        except json.JSONDecodeError as exc:
            return cls(id, name, {}, raw, f"invalid JSON at character {exc.pos}: {exc.msg}")
        if not isinstance(value, dict):
            return cls(id, name, {}, raw, f"arguments must be a JSON object, got {type(value).__name__}")
        return cls(id, name, value, raw)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "raw_arguments": self.raw_arguments,
            "parse_error": self.parse_error,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "tool_call") -> ToolCall:
        return cls(
            id=str(require_field(data, "id", where)),
            name=str(require_field(data, "name", where)),
            arguments=dict(data.get("arguments") or {}),
            raw_arguments=str(data.get("raw_arguments", "{}")),
            parse_error=data.get("parse_error"),
        )


@dataclass(frozen=True)
class Message:
    """One chat turn.

    Attributes:
        role: ``system``, ``user``, ``assistant`` or ``tool``.
        content: Plain text, or a sequence of text and image parts.
        tool_calls: Calls an assistant turn made.
        tool_call_id: For ``tool`` turns, the id of the call this answers.
    """

    role: Role
    content: str | Sequence[Part] = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            raise ValueError(f"Message.role: expected one of {_ROLES}, got {self.role!r}")
        # Lists are accepted for convenience and frozen to tuples so messages stay hashable-ish
        # and cannot change after they were hashed into a cache key.
        if not isinstance(self.content, str):
            parts = tuple(self.content)
            for i, p in enumerate(parts):
                if not isinstance(p, TextPart | ImagePart):
                    raise ValueError(
                        f"Message.content[{i}]: expected TextPart or ImagePart, got {type(p).__name__}"
                    )
            object.__setattr__(self, "content", parts)
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("Message: a 'tool' message needs the tool_call_id it answers")

    @classmethod
    def system(cls, text: str) -> Message:
        return cls("system", text)

    @classmethod
    def user(cls, text: str, images: tuple[Any, ...] | list[Any] = ()) -> Message:
        """A user turn: text followed by images (arrays, PNG bytes, paths or ImageParts)."""
        if not images:
            return cls("user", text)
        return cls("user", (TextPart(text), *(ImagePart.of(i) for i in images)))

    @classmethod
    def assistant(cls, text: str = "", tool_calls: tuple[ToolCall, ...] | list[ToolCall] = ()) -> Message:
        return cls("assistant", text, tuple(tool_calls))

    @classmethod
    def tool(cls, tool_call_id: str, text: str, images: tuple[Any, ...] | list[Any] = ()) -> Message:
        """A tool result answering the call ``tool_call_id``."""
        content: str | tuple[Part, ...] = text
        if images:
            content = (TextPart(text), *(ImagePart.of(i) for i in images))
        return cls("tool", content, (), tool_call_id)

    @property
    def parts(self) -> tuple[Part, ...]:
        """The content as parts (a plain string is one text part; empty text is none)."""
        if isinstance(self.content, str):
            return (TextPart(self.content),) if self.content else ()
        return tuple(self.content)

    @property
    def text(self) -> str:
        """All text parts joined, images left out."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def images(self) -> tuple[ImagePart, ...]:
        return tuple(p for p in self.parts if isinstance(p, ImagePart))

    def to_dict(self) -> dict[str, Any]:
        content = self.content if isinstance(self.content, str) else [p.to_dict() for p in self.content]
        return {
            "role": self.role,
            "content": content,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "tool_call_id": self.tool_call_id,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "message") -> Message:
        raw = data.get("content", "") if isinstance(data, dict) else None
        content: str | tuple[Part, ...]
        if isinstance(raw, str):
            content = raw
        elif isinstance(raw, list):
            content = tuple(part_from_dict(p, f"{where}.content[{i}]") for i, p in enumerate(raw))
        else:
            raise ValueError(f"{where}.content: expected a string or a list of parts")
        calls = tuple(
            ToolCall.from_dict(c, f"{where}.tool_calls[{i}]")
            for i, c in enumerate(data.get("tool_calls") or [])
        )
        return cls(require_field(data, "role", where), content, calls, data.get("tool_call_id"))


@dataclass(frozen=True)
class Tool:
    """A function the model may call.

    Attributes:
        name: Identifier the model uses (letters, digits, ``_`` and ``-``).
        description: What the tool does, written for the model.
        parameters: JSON Schema of the arguments object.
    """

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    @classmethod
    def from_dict(cls, data: Any, where: str = "tool") -> Tool:
        return cls(
            str(require_field(data, "name", where)),
            str(data.get("description", "")),
            dict(data.get("parameters") or {}),
        )


@dataclass(frozen=True)
class ChatRequest:
    """Everything that determines a model call, and nothing else (it is the cache key).

    Attributes:
        messages: The conversation so far.
        tools: Functions the model may call.
        temperature: Sampling temperature; None leaves the server default.
        max_tokens: Cap on generated tokens; None leaves the client/server default.
        tool_choice: ``"auto"``, ``"none"``, ``"required"``, a tool name to force, or None.
        stop: Stop sequences.
        seed: Sampling seed for servers that honour one.
        top_p: Nucleus-sampling mass in (0, 1]; None leaves the server default.
    """

    messages: tuple[Message, ...]
    tools: tuple[Tool, ...] = ()
    temperature: float | None = None
    max_tokens: int | None = None
    tool_choice: str | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    top_p: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(self.messages))
        object.__setattr__(self, "tools", tuple(self.tools))
        object.__setattr__(self, "stop", tuple(self.stop))
        if not self.messages:
            raise ValueError("ChatRequest: messages must not be empty")
        if self.temperature is not None:
            # 1 and 1.0 must hash to the same cache key
            object.__setattr__(self, "temperature", float(self.temperature))
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"ChatRequest.max_tokens: must be >= 1, got {self.max_tokens}")
        if self.top_p is not None:
            object.__setattr__(self, "top_p", float(self.top_p))
            if not 0.0 < self.top_p <= 1.0:
                raise ValueError(f"ChatRequest.top_p: must be in (0, 1], got {self.top_p}")
        names = {t.name for t in self.tools}
        if self.tool_choice not in (None, "auto", "none", "required") and self.tool_choice not in names:
            raise ValueError(
                f"ChatRequest.tool_choice: {self.tool_choice!r} is not 'auto', 'none', 'required' or a tool name"
            )

    @property
    def has_reply(self) -> bool:
        """Whether the conversation holds a reply of the model (an assistant turn)."""
        return any(m.role == "assistant" for m in self.messages)

    def size_bytes(self) -> int:
        """About how many bytes the request carries: its text and tool arguments (a character
        counted as a byte) and its images as base64."""
        size = 0
        for m in self.messages:
            size += sum(len(p.text) if isinstance(p, TextPart) else len(p.png) * 4 // 3 for p in m.parts)
            size += sum(len(c.raw_arguments) + len(c.name) for c in m.tool_calls)
        return size

    def to_dict(self) -> dict[str, Any]:
        out = {
            "messages": [m.to_dict() for m in self.messages],
            "tools": [t.to_dict() for t in self.tools],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "tool_choice": self.tool_choice,
            "stop": list(self.stop),
            "seed": self.seed,
        }
        if self.top_p is not None:  # absent when unset, so recordings made before top_p keep their cache keys
            out["top_p"] = self.top_p
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str = "request") -> ChatRequest:
        msgs = require_field(data, "messages", where)
        return cls(
            messages=tuple(Message.from_dict(m, f"{where}.messages[{i}]") for i, m in enumerate(msgs)),
            tools=tuple(
                Tool.from_dict(t, f"{where}.tools[{i}]") for i, t in enumerate(data.get("tools") or [])
            ),
            temperature=data.get("temperature"),
            max_tokens=data.get("max_tokens"),
            tool_choice=data.get("tool_choice"),
            stop=tuple(data.get("stop") or ()),
            seed=data.get("seed"),
            top_p=data.get("top_p"),
        )


@dataclass(frozen=True)
class Usage:
    """Tokens and model calls spent. ``requests`` counts calls that reached a model (one per
    ``generate``, however many HTTP retries it took); ``+`` adds two usages."""

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.requests + other.requests,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "requests": self.requests,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Usage:
        data = data or {}
        return cls(
            int(data.get("input_tokens", 0)), int(data.get("output_tokens", 0)), int(data.get("requests", 0))
        )


@dataclass(frozen=True)
class ApiError:
    """Why a call produced no answer.

    Attributes:
        kind: ``api_error`` (HTTP error, connection failure or malformed reply, after
            retries), ``timeout`` (the last attempt timed out), ``budget`` (refused before
            contacting the server), ``replay_miss`` (not in the replay file),
            ``context_length`` (the server refused the request as longer than the model's
            context window; not retried: the same conversation would be refused again).
        message: One line for a person.
        status_code: The last HTTP status, when there was one.
        attempts: HTTP attempts made (0 when the server was never contacted).
    """

    kind: ErrorKind
    message: str
    status_code: int | None = None
    attempts: int = 0

    def __post_init__(self) -> None:
        if self.kind not in _ERROR_KINDS:
            raise ValueError(f"ApiError.kind: expected one of {_ERROR_KINDS}, got {self.kind!r}")

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": self.message,
            "status_code": self.status_code,
            "attempts": self.attempts,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "error") -> ApiError:
        return cls(
            require_field(data, "kind", where),
            str(require_field(data, "message", where)),
            data.get("status_code"),
            int(data.get("attempts", 0)),
        )


def _distinct_ids(calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
    """``calls`` with an id of their own each: a call whose id is empty or repeats an earlier
    one's gets ``call_<its index>`` (or the first free ``call_<index>_<n>``). Each result is matched
    to its call by id; an empty one cannot be sent back at all, and two calls sharing one would
    get each other's answers."""
    seen: set[str] = set()
    out = []
    for index, call in enumerate(calls):
        if not call.id or call.id in seen:
            new, n = f"call_{index}", 0
            while new in seen or any(c.id == new for c in calls[index + 1:]):
                n += 1
                new = f"call_{index}_{n}"
            call = dataclasses.replace(call, id=new)
        seen.add(call.id)
        out.append(call)
    return tuple(out)


@dataclass(frozen=True)
class ChatResponse:
    """A model's answer, or the error that replaced it (never an exception).

    Attributes:
        text: The assistant text ("" when there is none or on error).
        tool_calls: Calls the model requested.
        usage: What this call spent.
        finish_reason: ``stop``, ``length``, ``tool_calls``, ``content_filter`` or the
            provider's own word; None on error.
        model: The model name the server reported (or the one asked for).
        error: Set when the call failed; then ``text`` and ``tool_calls`` are empty.
        latency_s: Wall seconds of the call, retries and back-off included.
        cached: True when served from a replay file.
        attempts: HTTP attempts the call took (0 for scripted/replayed/refused calls).
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    finish_reason: str | None = None
    model: str = ""
    error: ApiError | None = None
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 0

    def __post_init__(self) -> None:
        # What a model said goes into the next request, the store and replay files as UTF-8.
        object.__setattr__(self, "text", valid_text(self.text))
        object.__setattr__(self, "tool_calls", _distinct_ids(tuple(self.tool_calls)))

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_message(self) -> Message:
        """The assistant turn to append to the conversation."""
        return Message.assistant(self.text, self.tool_calls)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "usage": self.usage.to_dict(),
            "finish_reason": self.finish_reason,
            "model": self.model,
            "error": None if self.error is None else self.error.to_dict(),
            "latency_s": self.latency_s,
            "cached": self.cached,
            "attempts": self.attempts,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "response") -> ChatResponse:
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(data).__name__}")
        err = data.get("error")
        return cls(
            text=str(data.get("text", "")),
            tool_calls=tuple(
                ToolCall.from_dict(c, f"{where}.tool_calls[{i}]")
                for i, c in enumerate(data.get("tool_calls") or [])
            ),
            usage=Usage.from_dict(data.get("usage")),
            finish_reason=data.get("finish_reason"),
            model=str(data.get("model", "")),
            error=None if err is None else ApiError.from_dict(err, f"{where}.error"),
            latency_s=float(data.get("latency_s", 0.0)),
            cached=bool(data.get("cached", False)),
            attempts=int(data.get("attempts", 0)),
        )

    @classmethod
    def failure(cls, error: ApiError, model: str = "", latency_s: float = 0.0) -> ChatResponse:
        """An error response carrying the attempts and no usage beyond the request itself."""
        requests = 1 if error.attempts > 0 else 0
        return cls(
            model=model,
            error=error,
            latency_s=latency_s,
            usage=Usage(0, 0, requests),
            attempts=error.attempts,
        )
