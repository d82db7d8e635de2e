"""Request bodies of the released API, checked, and its error bodies.

The released server is a FastAPI app: an HTTP error answers ``{"detail": "message"}``, and a
body that does not fit its request model answers 422 with ``{"detail": [{"type", "loc",
"msg", "input"}, …]}`` (pydantic's error list, ``loc`` starting with ``"body"``). We answer
the same shapes, with the same ``type`` codes, so a client's error handling keeps working.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from buildbench.jsonio import parse_json

#: Protocols a session may name (the released ``CreateSessionRequest``).
SESSION_PROTOCOLS: tuple[str, ...] = ("stepwise", "oneshot")
#: Largest Blender script accepted by a code submission (our extension), characters.
MAX_CODE_CHARS = 1_000_000
#: Largest offending value echoed back in an error's ``input``, characters of JSON.
_ECHO_CHARS = 200


class ApiError(Exception):
    """An answer other than 200, with the released error body.

    Attributes:
        status: HTTP status.
        detail: A message (``{"detail": "..."}``) or pydantic's error list (422).
    """

    def __init__(self, status: int, detail: str | list[dict[str, Any]]) -> None:
        super().__init__(detail if isinstance(detail, str) else "; ".join(e["msg"] for e in detail))
        self.status = status
        self.detail = detail

    def body(self) -> dict[str, Any]:
        return {"detail": self.detail}


def field_error(kind: str, loc: tuple[str | int, ...], msg: str, value: Any = None) -> ApiError:
    """A 422 with one pydantic-style entry; ``value`` is echoed as ``input`` when it is small."""
    entry: dict[str, Any] = {"type": kind, "loc": ["body", *loc], "msg": msg}
    if _json_size_within(value, _ECHO_CHARS):
        try:
            echoed = json.dumps(value)
        except (TypeError, ValueError):
            echoed = ""
        if echoed and len(echoed) <= _ECHO_CHARS:
            entry["input"] = value
    return ApiError(422, [entry])


def shown(text: str, most: int = 100) -> str:
    """``text`` quoted for an error message, cut to ``most`` characters: an id from a request
    body can be megabytes long, and the answer must not echo it."""
    return repr(text) if len(text) <= most else f"{text[:most]!r}… ({len(text)} characters)"


def _json_size_within(value: Any, budget: int) -> bool:
    """Whether ``value``'s JSON text may fit ``budget`` characters, counting at least one character
    per string character, number, list item and key: stops as soon as the budget is spent, so a
    refused body of a million items is not serialised just to find it too long to echo (that
    took 0.8 CPU s for a 13 MB object, as long as parsing it)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            budget -= len(item) + 2
        elif isinstance(item, dict):
            budget -= 2 + len(item)
            if budget >= 0:
                stack.extend(item.keys())
                stack.extend(item.values())
        elif isinstance(item, list):
            budget -= 2 + len(item)
            if budget >= 0:
                stack.extend(item)
        else:
            budget -= 1
        if budget < 0:
            return False
    return True


def parse_body(raw: bytes) -> dict[str, Any]:
    """The JSON object of a request body.

    Raises:
        ApiError: 422 ``missing`` for no body, ``json_invalid`` for bad JSON (with the
            position and the reason), ``model_attributes_type`` for a body that is not an object.
    """
    if not raw.strip():
        raise field_error("missing", (), "Field required: the request needs a JSON object body")
    try:
        body = parse_json(raw)
    except json.JSONDecodeError as exc:
        raise ApiError(422, [{"type": "json_invalid", "loc": ["body", exc.pos],
                              "msg": f"JSON decode error: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                              "input": {}, "ctx": {"error": exc.msg}}]) from None
    if not isinstance(body, dict):
        raise field_error("model_attributes_type", (),
                          f"Input should be a valid dictionary or object to extract fields from, "
                          f"got a JSON {type(body).__name__}", body)
    return body


def _string(body: dict[str, Any], key: str, default: str | None) -> str:
    if key not in body:
        if default is None:
            raise field_error("missing", (key,), f"Field required: {key!r} is missing", body)
        return default
    value = body[key]
    if not isinstance(value, str):
        raise field_error("string_type", (key,), f"Input should be a valid string ({key!r})", value)
    return value


@dataclass(frozen=True)
class SessionRequest:
    """``POST /v1/sessions``: ``task_id`` (required), ``model_id`` (default ``local``),
    ``protocol`` (``stepwise`` | ``oneshot``, default ``stepwise``); other keys are ignored."""

    task_id: str
    model_id: str
    protocol: str

    @classmethod
    def parse(cls, raw: bytes) -> SessionRequest:
        body = parse_body(raw)
        protocol = _string(body, "protocol", "stepwise")
        if protocol not in SESSION_PROTOCOLS:
            expected = " or ".join(repr(p) for p in SESSION_PROTOCOLS)
            error = field_error("literal_error", ("protocol",), f"Input should be {expected}", protocol)
            assert isinstance(error.detail, list)
            error.detail[0]["ctx"] = {"expected": expected}
            raise error
        return cls(_string(body, "task_id", None), _string(body, "model_id", "local"), protocol)


@dataclass(frozen=True)
class SubmitRequest:
    """``POST /v1/sessions/{id}/submit``: ``members`` (a list of objects, the released export
    form), or ``code`` (a Blender script: our extension for clients without Blender)."""

    members: list[dict[str, Any]]
    code: str | None = None

    @classmethod
    def parse(cls, raw: bytes) -> SubmitRequest:
        body = parse_body(raw)
        members = body.get("members", [])
        if not isinstance(members, list):
            raise field_error("list_type", ("members",), "Input should be a valid list ('members')", members)
        for i, entry in enumerate(members):
            if not isinstance(entry, dict):
                raise field_error("dict_type", ("members", i),
                                  f"Input should be a valid dictionary (members[{i}] is a JSON "
                                  f"{type(entry).__name__})", entry)
        code = body.get("code")
        if code is not None:
            if not isinstance(code, str):
                raise field_error("string_type", ("code",), "Input should be a valid string ('code')", code)
            if len(code) > MAX_CODE_CHARS:
                raise ApiError(413, f"code is {len(code)} characters, over the limit of {MAX_CODE_CHARS}")
            if members:
                raise ApiError(400, "send either members or code, not both")
            if not code.strip():
                raise ApiError(400, "code cannot be empty")
            return cls([], code)
        if not members:
            raise ApiError(400, "members cannot be empty")
        return cls(members)
