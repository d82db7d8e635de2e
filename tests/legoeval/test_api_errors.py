"""A model endpoint that fails gives API-error episodes with no verdicts, never 'not judged'
verdicts in a scored episode."""

from __future__ import annotations

import socket

from buildbench.harness import RunConfig, Runner, Store


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_dead_endpoint_is_an_api_error_not_a_verdict(tmp_path) -> None:
    config = RunConfig(suite="legoeval", agent="llm", protocol="evaluate", split="demo", limit=1,
                       model=f"vllm:dead@http://127.0.0.1:{_dead_port()}/v1",
                       options={"max_retries": 0, "timeout_s": 2, "render": False}, workers=0)
    result = Runner(config, tmp_path / "run").run()
    assert result.summary["status"] == {"api_error": 1}
    assert result.summary["unscored"] == 1
    with Store(tmp_path / "run") as store:
        (episode,) = store.episodes()
    assert "verdicts" not in episode.outcome or not any(
        v.get("holds") is not None for v in episode.outcome.get("verdicts", []))
    assert episode.error and episode.error.startswith("api_error")
