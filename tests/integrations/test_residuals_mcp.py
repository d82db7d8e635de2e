"""The MCP server's running summary is made as the runner's: its summarizer sees the run's
options on every episode (a suite table may group by one, e.g. DreamHouse's condition)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server is optional: the mcp package is not installed")

from buildbench.harness import Episode  # noqa: E402
from buildbench.harness.run_options import RUN_OPTIONS  # noqa: E402
from buildbench.harness.suite import mean_metrics  # noqa: E402
from buildbench.integrations.mcp_episodes import McpRun  # noqa: E402

from .mcp_play import mcp_config  # noqa: E402


def test_store_episode_summarises_with_the_run_options(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def summarize(episodes: Sequence[Episode]) -> dict[str, Any]:
        seen.extend(ep.metadata.get(RUN_OPTIONS, {}) for ep in episodes)
        return {**mean_metrics(episodes), "seen": len(seen)}

    run = McpRun(mcp_config("example", protocol="refine", options={"tools": True}), tmp_path / "run").open()
    try:
        run.suite = dataclasses.replace(run.suite, summarize=summarize)
        task, sample = run.take(None)
        run.store_episode(Episode(task_id=task.id, sample=sample, suite="example", agent="llm", protocol="refine",
                                  seed=1))
        assert seen == [{"tools": True}]
        assert run.store.summary()["seen"] == 1
    finally:
        run.close()
