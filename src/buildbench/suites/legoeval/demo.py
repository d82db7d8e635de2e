"""The LEGO-Eval part of ``buildbench demo`` (offline, no keys).

1. The deterministic evaluator and the scripted baselines (constant predictors, SceneEval
   style) on the generated 130 + 130 pairs, through the harness, printed as Table 1 beside
   the paper's rows.
2. The LLM pipeline on a few pairs, its model played by :class:`ReferenceScript` behind the
   loopback OpenAI-compatible server (real HTTP, real SDK): constraint typing, tool plans,
   argument selection, concurrent tool runs with rendered images, validation. The script
   answers validation with the deterministic checker, so this part shows the pipeline
   working end to end, not a model's accuracy. Its tool images draw the objects as
   procedural furniture meshes (``-o geometry=procedural``); the environment-tool images of
   its first episode are written as PNGs (path printed).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from buildbench.harness import BuildbenchError, Episode, RunConfig, Runner, execute_episode
from buildbench.harness.episode_outcome import episode_outcome
from buildbench.harness.store import Store

from .outcome import LegoEvalOutcome

#: Agents run on all 260 pairs.
BENCH_AGENTS = ("deterministic", "sceneeval", "sceneeval-measurable", "always-valid", "always-invalid")
#: Pairs (aligned + misaligned) the scripted LLM pipeline evaluates.
LLM_PAIRS = 2
#: How the pipeline's tool images draw objects, and the size and number the demo writes.
MESH_LEVEL = "procedural"
MESH_IMAGE_PX = 336
MAX_MESH_IMAGES = 12


def _stored(run_dir: Path) -> list[Episode]:
    with Store(run_dir, create=False) as store:
        return list(store.episodes())


def run_benchmark(run_dir: Path, agents: tuple[str, ...] = BENCH_AGENTS, *, split: str = "default") -> dict[str, list[Episode]]:
    """Run each scripted agent on the split (stored under ``run_dir/legoeval-<agent>``)."""
    groups: dict[str, list[Episode]] = {}
    for agent in agents:
        out = run_dir / f"legoeval-{agent}"
        Runner(RunConfig(suite="legoeval", agent=agent, protocol="evaluate", split=split, workers=2), out,
               progress=False).run()
        episodes = _stored(out)
        errors = [ep for ep in episodes if ep.status != "ok"]
        if errors:
            raise BuildbenchError(f"demo: {len(errors)} legoeval/{agent} episode(s) failed, e.g. {errors[0].error}; "
                                  f"see `buildbench report {out}`")
        groups[agent] = episodes
    return groups


async def _llm_episode(task: Any) -> Episode:
    from buildbench.llm import OpenAIChat, ScriptedServer

    from .env import load_task_scene
    from .pipeline.scripted import ReferenceScript

    script = ReferenceScript(load_task_scene(task), [dict(c) for c in task.inputs["constraints"]])
    with ScriptedServer(script.for_server(), model="legoeval-reference-script") as server:
        model = OpenAIChat("legoeval-reference-script", base_url=server.base_url)
        try:
            config = RunConfig(suite="legoeval", agent="llm", protocol="evaluate",
                               options={"image_px": 160, "geometry": MESH_LEVEL})
            return await execute_episode(config, task, 0, None, model)
        finally:
            await model.aclose()


def run_llm_pipeline(n_pairs: int = LLM_PAIRS) -> list[Episode]:
    """The LLM agent on the first ``n_pairs`` generated pairs, one loopback server per task."""
    from .suite import load_tasks

    tasks = load_tasks("demo", 0)[: 2 * n_pairs]
    episodes = [asyncio.run(_llm_episode(t)) for t in tasks]
    errors = [ep for ep in episodes if ep.status != "ok"]
    if errors:
        raise BuildbenchError(f"demo: the scripted LLM pipeline failed on {errors[0].task_id}: {errors[0].error}")
    return episodes


def _llm_table(episodes: list[Episode]) -> Table:
    table = Table(title="LEGO-Eval LLM pipeline: a scripted model over the loopback OpenAI-compatible server")
    table.add_column("task", no_wrap=True)
    for col in ("holds T/F/?", "valid", "label", "requests", "tools", "reused", "images"):
        table.add_column(col, justify="right")
    for ep in episodes:
        outcome = episode_outcome(ep, LegoEvalOutcome)
        if outcome is None:  # nothing to count: said, not shown as zeros
            table.add_row(ep.task_id, "no outcome", "–", str(bool(ep.metrics.get("valid_label"))),
                          str(ep.usage.get("requests", 0)), "–", "–", "–")
            continue
        verdicts = [v.get("holds") for v in outcome.verdicts]
        calls = _trace_calls(outcome)
        table.add_row(ep.task_id, f"{verdicts.count(True)}/{verdicts.count(False)}/{verdicts.count(None)}",
                      str(outcome.valid), str(bool(ep.metrics.get("valid_label"))),
                      str(ep.usage.get("requests", 0)), str(len(calls)), str(sum(c["reused"] for c in calls)),
                      str(sum(len(c["image_keys"]) for c in calls)))
    return table


def _trace_calls(outcome: LegoEvalOutcome | None) -> list[dict[str, Any]]:
    """The tool calls of the LLM pipeline's trace, in order (none without a trace or an outcome)."""
    if outcome is None:
        return []
    return [c for step in outcome.trace or [] for c in step["calls"]]


def _table1(title: str, rows: list[dict[str, Any]]) -> Table:
    """Table 1 in 80 columns: holistic and partial F1 and κ per method, the paper's rows first
    (precision and recall are in ``buildbench legoeval report``)."""
    table = Table(title=title)
    table.add_column("method", no_wrap=True)
    for col in ("holistic F1", "κ", "partial F1", "κ", "unknown"):
        table.add_column(col, justify="right")

    def cell(v: Any) -> str:
        return "–" if v is None else f"{v:.2f}"

    for r in rows:
        unknown = r.get("unknown_constraints")
        name = f"{r['method']} (paper)" if r["source"] == "paper" else str(r["method"])
        table.add_row(name, *(cell(r.get(k)) for k in ("hol_f1", "hol_kappa", "part_f1", "part_kappa")),
                      "–" if unknown is None else str(unknown))
    return table


def run_demo(run_dir: Path, console: Console) -> None:
    """Run both parts into ``run_dir`` and print their tables."""
    from .report import run_tables

    t0 = time.perf_counter()
    groups = run_benchmark(run_dir)
    rows = run_tables(groups)["Table 1: agreement with labels"]
    console.print(_table1("LEGO-Eval Table 1: agreement with labels on the generated 130 + 130 pairs", rows))
    console.print(f"deterministic + scripted baselines on {len(groups['deterministic'])} pairs: "
                  f"{time.perf_counter() - t0:.0f} s; runs under {run_dir}/legoeval-*")
    t1 = time.perf_counter()
    episodes = run_llm_pipeline()
    console.print(_llm_table(episodes))
    llm_rows = run_tables({"llm (scripted)": episodes})["Table 1: agreement with labels"][-1:]
    console.print(_table1(f"Scripted LLM pipeline on {len(episodes)} tasks (a plumbing check, not a model score)",
                          llm_rows))
    console.print(f"scripted LLM pipeline on {len(episodes)} tasks: {time.perf_counter() - t1:.0f} s")
    folder = mesh_episode_images(episodes[0], run_dir / "mesh-renders")
    console.print(f"LEGO-Eval episode {episodes[0].task_id} rendered from meshes (its environment-tool images): "
                  f"{folder}")


def mesh_episode_images(episode: Episode, folder: Path) -> Path:
    """Replay the environment tools the episode called that gave images (material swatches
    aside: they draw no objects), once per distinct call, on its house at
    :data:`MESH_LEVEL` and :data:`MESH_IMAGE_PX`, and write up to :data:`MAX_MESH_IMAGES` of
    their images into ``folder`` (``<k>_<tool>_<argument>.png``); returns ``folder``."""
    import json
    import re

    from .env import load_task_scene
    from .suite import load_tasks
    from .tools import ToolContext, is_image_key, run_tool
    from .tools.environment import ENVIRONMENT

    task = next(t for t in load_tasks("demo", 0) if t.id == episode.task_id)
    ctx = ToolContext.for_scene(load_task_scene(task), image_px=MESH_IMAGE_PX, geometry=MESH_LEVEL)
    calls = {(c["tool"], json.dumps(c["args"])): c["args"] for c in _trace_calls(episode_outcome(episode, LegoEvalOutcome))
             if c["tool"] in ENVIRONMENT and c["tool"] != "get_material_image" and c["image_keys"]}
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    for (tool, _), args in calls.items():
        for key, value in run_tool(ctx, tool, args).items():
            if written < MAX_MESH_IMAGES and is_image_key(key) and isinstance(value, bytes):
                name = re.sub(r"[^A-Za-z0-9_.-]+", "_", "_".join(key.split("*/*")[:2]))[:60]
                (folder / f"{written:02d}_{name}.png").write_bytes(value)
                written += 1
    return folder
