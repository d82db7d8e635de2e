"""The loopback model server's request bodies come from agent workflows: 100,000 brackets
raised RecursionError in the handler (the client got a dropped connection); a body json.loads
cannot read is a 400 naming why, and the server goes on answering."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from buildbench.llm.server import ScriptedServer


def _post(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize("body, message", [
    (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 200 levels"),
    (b'{"a": ' + b"9" * 10_000 + b"}", "an integer of 10000 digits is over the 4300-digit limit"),
])
def test_a_hostile_request_body_is_a_400(body: bytes, message: str) -> None:
    with ScriptedServer(lambda req: "hello") as srv:
        url = srv.base_url.rstrip("/") + "/chat/completions"
        code, answer = _post(url, body)
        assert code == 400 and f"request body is not valid JSON: {message}" in answer["error"]["message"]
        code, answer = _post(url, json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode())
        assert code == 200 and answer["choices"][0]["message"]["content"] == "hello"
