"""The model evaluation judge end to end: a scripted judge behind the loopback
OpenAI-compatible server scores the final scene of a scripted agent's episode; a malformed
answer and an API error leave the judge fields out, record the status, and the episode is
still scored for physics; a recorded judge replays offline."""

from __future__ import annotations

import base64
import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from buildbench.harness import RunConfig, Runner, Store
from buildbench.harness import suite as suite_registry
from buildbench.harness.errors import ConfigError
from buildbench.llm import Fault, ScriptedServer, ServerReply
from buildbench.suites.scenerevis.suite import suite as scenerevis_suite
from buildbench.suites.scenerevis.tasks import load_tasks

GOOD = json.dumps({"rationality": 8, "spatial_layout": 7, "accessibility": 6, "comment": "Fine."})
TABLE1 = "Table 1: bedroom / living room (OBR, CNR %; Ra, Spa, Ac, Avg 1-10)"


@pytest.fixture
def one_task(monkeypatch: pytest.MonkeyPatch) -> None:
    task = next(t for t in load_tasks("demo", 0) if t.metadata.get("room") == "bedroom")
    suite = dataclasses.replace(scenerevis_suite, load_tasks=lambda split, seed: [task])
    monkeypatch.setitem(suite_registry._loaded, "scenerevis", suite)


def run(tmp_path: Path, options: dict[str, Any]) -> tuple[Any, Any]:
    config = RunConfig(suite="scenerevis", agent="diagnose", protocol="diagnose-act", split="demo", workers=0,
                       options={"render": False, "max_retries": 0, **options})
    result = Runner(config, tmp_path, progress=False).run()
    with Store(tmp_path) as store:
        return next(store.episodes()), result.summary


def image_size(body: dict) -> tuple[int, int]:
    parts = body["messages"][-1]["content"]
    url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size


def test_the_model_judge_scores_the_final_scene(one_task, tmp_path):
    with ScriptedServer([ServerReply(text=f"Scores: {GOOD}")]) as server:
        ep, summary = run(tmp_path, {"eval_judge": f"vllm:judge@{server.base_url}"})
        bodies = [r.body for r in server.requests]
    assert len(bodies) == 1 and bodies[0]["temperature"] == 0.1 and image_size(bodies[0]) == (1080, 570)
    prompt = "".join(p.get("text", "") for p in bodies[0]["messages"][-1]["content"])
    assert "Request:" in prompt and "objects:" in prompt and "rationality" in prompt
    assert ep.status == "ok"
    assert (ep.metrics["Ra"], ep.metrics["Spa"], ep.metrics["Ac"], ep.metrics["Avg"]) == (8.0, 7.0, 6.0, 7.0)
    assert ep.metrics["judge_comparable"] == 1.0 and ep.metrics["judge_failed"] == 0.0
    record = ep.outcome["eval_judge"]
    assert record["status"] == "ok" and record["judge"] == "vision:vllm:judge" and "Fine." in record["reply"]
    assert ep.outcome["latency_s"] > 0 and ep.metrics["latency_s"] == ep.outcome["latency_s"]
    judge_steps = [s for s in ep.steps if s.role == "judge"]
    assert len(judge_steps) == 1 and judge_steps[0].image_paths and judge_steps[0].action_text.startswith("Scores")
    ours = [r for r in summary["tables"][TABLE1] if r["source"].startswith("ours")]
    assert ours[0]["Ra"] == 8.0 and ours[-1]["Avg"] == 7.0 and ours[0]["judge"] == "vision:vllm:judge"
    episodes_row = summary["tables"][next(k for k in summary["tables"] if k.startswith("episodes"))][0]
    assert episodes_row["judge failures"] == 0 and isinstance(episodes_row["latency per scene (s)"], float)


@pytest.mark.parametrize("trouble", ["malformed", "api error"])
def test_a_judge_failure_leaves_the_scores_out_and_the_physics_in(one_task, tmp_path, trouble):
    replies = [ServerReply(text="It is a nice room, about eight out of ten.")] if trouble == "malformed" else [GOOD]
    with ScriptedServer(replies) as server:
        if trouble == "api error":
            server.inject(Fault.server_error(500))
        ep, summary = run(tmp_path, {"eval_judge": f"vllm:judge@{server.base_url}"})
    assert ep.status == "ok" and ep.outcome["eval_judge"]["status"] == "error"
    assert ep.outcome["eval_judge"]["error"]
    assert not {"Ra", "Spa", "Ac", "Avg"} & set(ep.metrics) and ep.metrics["judge_failed"] == 1.0
    assert "oob_rate" in ep.metrics and "collision_rate" in ep.metrics
    ours = [r for r in summary["tables"][TABLE1] if r["source"].startswith("ours")]
    assert ours[-1]["Ra"] == "–" and isinstance(ours[-1]["OBR"], float)
    episodes_row = summary["tables"][next(k for k in summary["tables"] if k.startswith("episodes"))][0]
    assert episodes_row["judge failures"] == 1 and episodes_row["scored"] == 1


def test_a_recorded_judge_replays_without_the_server(one_task, tmp_path):
    record = tmp_path / "judge.jsonl"
    with ScriptedServer([GOOD]) as server:
        url = server.base_url
        first, _ = run(tmp_path / "a", {"eval_judge": f"vllm:judge@{url}", "eval_judge_record": str(record)})
    assert record.exists() and len(record.read_text().splitlines()) == 1
    again, _ = run(tmp_path / "b", {"eval_judge": f"vllm:judge@{url}", "eval_judge_record": str(record)})
    assert again.outcome["eval_judge"]["status"] == "ok"
    assert [again.metrics[k] for k in ("Ra", "Spa", "Ac")] == [first.metrics[k] for k in ("Ra", "Spa", "Ac")]


def test_the_rule_judge_is_the_default_and_none_turns_it_off(one_task, tmp_path):
    ep, summary = run(tmp_path / "rule", {})
    assert ep.outcome["eval_judge"]["judge"] == "rule" and ep.metrics["judge_comparable"] == 0.0
    assert all(1 <= ep.metrics[k] <= 10 for k in ("Ra", "Spa", "Ac"))
    ours = [r for r in summary["tables"][TABLE1] if r["source"].startswith("ours")]
    assert ours[-1]["judge"] == "rule judge: not comparable" and isinstance(ours[-1]["Avg"], float)
    off, _ = run(tmp_path / "none", {"eval_judge": "none"})
    assert "Ra" not in off.metrics and off.metrics["oob_rate"] == ep.metrics["oob_rate"]
    assert np.isclose(off.metrics["collision_rate"], ep.metrics["collision_rate"])


def test_a_malformed_judge_spec_or_a_missing_key_is_refused_before_the_run(one_task, tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="model spec 'gpt-5'"):
        run(tmp_path / "a", {"eval_judge": "gpt-5"})
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        run(tmp_path / "b", {"eval_judge": "openai:gpt-5"})
