"""The multi-run report (``buildbench legoeval report RUN_DIR ...``) on tiny stored runs:
the scripted LLM pipeline on 2 demo pairs in four settings (full, ``disable=environment``,
``constraints=identify``, ``plans=reference``) and the deterministic agent through the
runner; Tables 2, 4, 5 and 7 checked against numbers recomputed from the episodes, and Table 2's
and Table 4's F1 cells' paired intervals recomputed by hand on hand-made runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from buildbench.cli.main import main
from buildbench.harness import Episode, RunConfig, Runner, Store, Task, execute_episode
from buildbench.harness.stats import Estimate
from buildbench.harness.tables import cell_text
from buildbench.llm import ScriptedChat
from buildbench.suites.legoeval.env import load_task_scene
from buildbench.suites.legoeval.metrics import agreement
from buildbench.suites.legoeval.pipeline.scripted import ReferenceScript
from buildbench.suites.legoeval.report import PAPER_TABLE5, PAPER_TABLE7, T5_TITLE, T7_TITLE
from buildbench.suites.legoeval.report_runs import (
    PAPER_TABLE2,
    T2_TITLE,
    T4_TITLE,
    StoredRun,
    ablation_name,
    ablation_rows,
    identify_rows,
    read_runs,
    runs_tables,
)
from buildbench.suites.legoeval.suite import load_tasks

# The runs are stored once per module: its tests on one worker, not the runs made on both.
pytestmark = pytest.mark.xdist_group("legoeval-report-runs")

MODEL = "scripted:blind-lenient"
BASE = {"image_px": 32}
SETTINGS = {"full": {}, "no-env": {"disable": "environment"}, "identify": {"constraints": "identify"},
            "given-plans": {"plans": "reference"}}


def blind_lenient(task: Task) -> ScriptedChat:
    """The reference script, except that a validation shown no image says the constraint
    holds: a model that trusts what it cannot see, so removing the views costs F1."""
    script = ReferenceScript(load_task_scene(task), [dict(c) for c in task.inputs["constraints"]])

    def reply(request: Any) -> str:
        message = request.messages[-1]
        if message.text.startswith("TASK: constraint validation") and not message.images:
            return "Evaluation: <<True, nothing I can see contradicts it>>"
        return script(message.text)

    return ScriptedChat(reply)


def store_llm_run(run_dir: Path, options: dict[str, Any], tasks: list[Task]) -> None:
    """Play the llm agent on each task (one scripted model per scene) and store the run with
    its manifest, as the runner would."""
    config = RunConfig(suite="legoeval", agent="llm", protocol="evaluate", model=MODEL, split="demo",
                       limit=len(tasks), options={**BASE, **options})
    with Store(run_dir) as store:
        store.write_manifest({"config": config.to_dict()})
        for task in tasks:
            store.add_episode(asyncio.run(execute_episode(config, task, 0, None, blind_lenient(task))))


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    demo = load_tasks("demo", 0)
    tasks = demo[4:6] + demo[8:10]  # twins that break a relation and a wall material: things one sees
    dirs = {}
    for name, options in SETTINGS.items():
        store_llm_run(root / name, options, tasks)
        dirs[name] = root / name
    Runner(RunConfig(suite="legoeval", agent="deterministic", protocol="evaluate", split="demo", limit=4,
                     workers=0), root / "deterministic").run()
    dirs["deterministic"] = root / "deterministic"
    return dirs


@pytest.fixture(scope="module")
def tables(run_dirs: dict[str, Path]) -> dict[str, list[dict[str, Any]]]:
    return runs_tables(read_runs(list(run_dirs.values())))


def _episodes(run_dir: Path) -> list[Episode]:
    with Store(run_dir, create=False) as store:
        return list(store.episodes())


def _hol_f1(run_dir: Path) -> float:
    eps = _episodes(run_dir)
    return agreement([bool(ep.metrics["valid_label"]) for ep in eps],
                     [None if "valid_pred" not in ep.metrics else bool(ep.metrics["valid_pred"]) for ep in eps]).f1


def test_runs_are_labelled_by_agent_model_and_options(run_dirs: dict[str, Path]) -> None:
    labels = [r.label for r in read_runs(list(run_dirs.values()))]
    assert labels == [f"llm[{MODEL}] image_px=32", f"llm[{MODEL}] disable=environment image_px=32",
                      f"llm[{MODEL}] constraints=identify image_px=32", f"llm[{MODEL}] image_px=32 plans=reference",
                      "deterministic"]


def test_table2_pairs_the_ablation_with_its_full_run(run_dirs: dict[str, Path],
                                                     tables: dict[str, list[dict[str, Any]]]) -> None:
    (row,) = tables[T2_TITLE]
    assert row["disabled"] == "w/o E" and row["full run"] == f"llm[{MODEL}] image_px=32"
    full, ablated = _hol_f1(run_dirs["full"]), _hol_f1(run_dirs["no-env"])
    # with views it judges these pairs right; without, it calls every scene valid: the
    # constant predictor's 1/3, a drop of two thirds
    assert full == 1.0 and ablated == pytest.approx(1 / 3)
    assert row["hol_f1_pct"] == pytest.approx(-200 / 3)
    assert row["hol_f1_pct"] == pytest.approx((ablated - full) / full * 100)
    # both runs judged the same 4 pairs; 4 scenes of two labels draw one label only too often
    cell = row["hol_f1_pct"]
    assert isinstance(cell, Estimate) and (cell.n, cell.tasks, cell.digits) == (8, 4, 2)
    assert row["paper_hol_f1_pct"] is None  # the paper has no "w/o E" row
    assert ablation_name("multimodal , environment") == "w/o E+M" and "w/o E+M" in PAPER_TABLE2


def test_table4_compares_identified_with_given_constraints(run_dirs: dict[str, Path],
                                                           tables: dict[str, list[dict[str, Any]]]) -> None:
    rows = tables[T4_TITLE]
    paper = [r for r in rows if r["source"] == "paper"]
    assert [r["setting"] for r in paper] == ["Oracle constraint", "Identified constraint", "Difference"]
    assert paper[0]["hol_M1"] == 0.12 and paper[2]["part_M4"] == -0.01
    oracle, ident, diff = [r for r in rows if r["source"] == "ours"]
    given_eps, ident_eps = _episodes(run_dirs["full"]), _episodes(run_dirs["identify"])
    assert oracle["hol_sr"] == pytest.approx(sum(ep.metrics["valid_pred"] for ep in given_eps) / 4)
    holds = sum(ep.metrics["partial_holds"] for ep in given_eps)
    assert oracle["part_sr"] == pytest.approx(holds / (holds + sum(ep.metrics["partial_fails"] for ep in given_eps)))
    # the script identifies exactly the given constraints, so the identified counts agree
    assert sum(ep.metrics["identified_n"] for ep in ident_eps) == sum(ep.metrics["n_constraints"] for ep in given_eps)
    assert ident["part_sr"] == pytest.approx(oracle["part_sr"]) and diff["part_sr"] == pytest.approx(0.0)
    assert diff["hol_sr"] == pytest.approx(ident["hol_sr"] - oracle["hol_sr"])


def test_tables5_and_7_split_planned_and_given_runs(run_dirs: dict[str, Path],
                                                    tables: dict[str, list[dict[str, Any]]]) -> None:
    t5 = {r["method"]: r for r in tables[T5_TITLE]}
    t7 = {r["method"]: r for r in tables[T7_TITLE]}
    assert set(PAPER_TABLE5) <= set(t5) and set(PAPER_TABLE7) <= set(t7) and t5["Qwen3-32B"]["ged"] == 2.55
    planned = t5[f"llm[{MODEL}] image_px=32"]
    eps = _episodes(run_dirs["full"])
    n = sum(ep.metrics["plan_constraints"] for ep in eps)
    assert planned["constraints"] == n and planned["skipped"] == 0
    assert planned["tool_f1"] == pytest.approx(sum(ep.metrics["tool_f1_sum"] for ep in eps) / n)
    assert planned["ged"] == pytest.approx(sum(ep.metrics["plan_ged_sum"] for ep in eps) / n)
    assert planned["hol_f1"] == pytest.approx(_hol_f1(run_dirs["full"]))
    # identified constraints have no reference plans: the row says so instead of scoring
    ident = t5[f"llm[{MODEL}] constraints=identify image_px=32"]
    assert ident["tool_f1"] is None and ident["skipped"] == ident["constraints"] + ident["skipped"] > 0
    given = t7[f"llm[{MODEL}] image_px=32 plans=reference"]
    geps = _episodes(run_dirs["given-plans"])
    assert given["argument_f1"] == pytest.approx(sum(ep.metrics["arg_f1_sum"] for ep in geps)
                                                 / sum(ep.metrics["arg_calls"] for ep in geps))
    assert "tool_f1" not in given and "deterministic" not in t5 and "deterministic" not in t7


def test_the_cli_combines_runs(run_dirs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["legoeval", "report", str(run_dirs["full"]), str(run_dirs["no-env"]), str(run_dirs["deterministic"]),
                 "--json"])
    out = capsys.readouterr().out
    assert code == 0
    tables = json.loads(out)["tables"]
    ours = [r["method"] for r in tables["Table 1: agreement with labels"] if r["source"] == "ours"]
    assert ours == [f"llm[{MODEL}] image_px=32", f"llm[{MODEL}] disable=environment image_px=32", "deterministic"]
    assert T2_TITLE in tables and T4_TITLE not in tables
    exported = json.loads(out)["table_intervals"][T2_TITLE][0]["hol_f1_pct"]
    assert exported["value"] == pytest.approx(-200 / 3) and exported["n"] == 8
    code = main(["legoeval", "report", str(run_dirs["full"])])
    assert code == 0 and "Table 5" in capsys.readouterr().out


def test_the_cli_refuses_a_folder_that_is_no_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["legoeval", "report", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error:") and str(tmp_path) in err and len(err.strip().splitlines()) == 1


def test_an_ablation_without_its_full_run_has_no_numbers(run_dirs: dict[str, Path]) -> None:
    (row,) = runs_tables(read_runs([run_dirs["no-env"]]))[T2_TITLE]
    assert row["full run"] is None and row["hol_f1_pct"] is None


# Hand-made runs over 8 scenes, labels alternating: (scene, label, verdict, partial tt, tf, ft, ff).
FULL = [("s0", 1, 1, 3, 0, 1, 1), ("s1", 0, 0, 2, 1, 0, 2), ("s2", 1, 1, 4, 1, 0, 0), ("s3", 0, 1, 1, 0, 2, 1),
        ("s4", 1, 1, 2, 0, 0, 2), ("s5", 0, 0, 0, 1, 1, 3), ("s6", 1, 0, 3, 1, 0, 1), ("s7", 0, 0, 1, 0, 0, 2)]
WEAK = [("s0", 1, 1, 2, 1, 1, 1), ("s1", 0, 1, 2, 1, 2, 0), ("s2", 1, 1, 3, 2, 1, 0), ("s3", 0, 1, 1, 0, 3, 0),
        ("s4", 1, 0, 1, 1, 1, 1), ("s5", 0, 0, 0, 1, 2, 2), ("s6", 1, 1, 2, 2, 0, 1), ("s7", 0, 1, 0, 1, 1, 1)]


def _scene_ep(scene: str, label: int, verdict: int, *partial: int) -> Episode:
    metrics: dict[str, Any] = {"valid_label": label, "valid_pred": verdict,
                               **dict(zip(("partial_tt", "partial_tf", "partial_ft", "partial_ff"), partial, strict=True)),
                               "partial_holds": partial[0] + partial[2], "partial_fails": partial[1] + partial[3],
                               "identified_holds": partial[0] + partial[2], "identified_fails": partial[1] + partial[3]}
    return Episode(task_id=scene, sample=0, suite="legoeval", agent="e", protocol="one-shot", seed=0, status="ok",
                   metrics=metrics)


def _confusions(scenes: list[tuple[Any, ...]], level: str) -> np.ndarray:
    """Per scene (tt, tf, ft, ff): the verdict's (holistic) or the constraints' (partial)."""
    if level == "partial":
        return np.array([s[3:] for s in scenes], dtype=float)
    keys = [("t" if s[1] else "f") + ("t" if s[2] else "f") for s in scenes]
    return np.array([[float(k == c) for c in ("tt", "tf", "ft", "ff")] for k in keys])


def _macro_f1(c: np.ndarray) -> np.ndarray:
    """Macro F1 of summed confusions (rows: resamples), NaN where the labels hold one class."""
    tt, tf, ft, ff = c.T
    with np.errstate(invalid="ignore", divide="ignore"):
        f1s = []
        for hit, pred, true in ((tt, tt + ft, tt + tf), (ff, ff + tf, ff + ft)):
            p, r = np.where(pred > 0, hit / pred, 0.0), np.where(true > 0, hit / true, 0.0)
            f1s.append(np.where(p + r > 0, 2 * p * r / (p + r), 0.0))
    return np.where((tt + tf > 0) & (ft + ff > 0), (f1s[0] + f1s[1]) / 2, np.nan)


def _span(values: np.ndarray) -> tuple[float, float]:
    defined = values[~np.isnan(values)]
    assert len(defined) >= 0.95 * len(values)  # else the cell has no interval
    low, high = np.quantile(defined, [0.025, 0.975])
    return float(low), float(high)


PICKS = np.random.default_rng(0).integers(0, 8, size=(2000, 8))  # one draw of scenes for both runs


def test_table2_relative_changes_carry_paired_intervals(tmp_path: Path) -> None:
    full = StoredRun(tmp_path / "f", {}, "e", [_scene_ep(*s) for s in FULL], "full")
    weak = StoredRun(tmp_path / "w", {"options": {"disable": "multimodal"}}, "e", [_scene_ep(*s) for s in WEAK],
                     "weak")
    (row,) = ablation_rows([full, weak])
    assert row["disabled"] == "w/o M" and row["paper_hol_f1_pct"] == PAPER_TABLE2["w/o M"][0]
    for key, level in (("hol_f1_pct", "holistic"), ("part_f1_pct", "partial")):
        a, b = _confusions(FULL, level), _confusions(WEAK, level)
        f1_a, f1_b = _macro_f1(a.sum(axis=0, keepdims=True))[0], _macro_f1(b.sum(axis=0, keepdims=True))[0]
        drawn_a = _macro_f1(a[PICKS].sum(axis=1))
        drawn_a[drawn_a == 0] = np.nan  # no change relative to an F1 of 0 (one draw here)
        low, high = _span((_macro_f1(b[PICKS].sum(axis=1)) / drawn_a - 1) * 100)
        cell = row[key]
        assert isinstance(cell, Estimate) and cell == pytest.approx((f1_b / f1_a - 1) * 100), key
        assert (cell.low, cell.high) == (pytest.approx(low), pytest.approx(high)), key
        assert (cell.n, cell.tasks) == (int(a.sum() + b.sum()), 8) and low < cell < high, key
        assert cell_text(cell) == f"{float(cell):.2f} [{cell.low:.2f}, {cell.high:.2f}]"


def test_table4_f1s_carry_intervals_and_their_difference_a_paired_one(tmp_path: Path) -> None:
    given = StoredRun(tmp_path / "g", {}, "e", [_scene_ep(*s) for s in FULL], "given")
    ident = StoredRun(tmp_path / "i", {"options": {"constraints": "identify"}}, "e", [_scene_ep(*s) for s in WEAK],
                      "ident")
    oracle, mine, diff = [r for r in identify_rows([given, ident]) if r["source"] == "ours"]
    g, i = _confusions(FULL, "holistic"), _confusions(WEAK, "holistic")
    for row, c in ((oracle, g), (mine, i)):
        low, high = _span(_macro_f1(c[PICKS].sum(axis=1)))
        cell = row["hol_f1"]
        assert isinstance(cell, Estimate) and cell == pytest.approx(_macro_f1(c.sum(axis=0, keepdims=True))[0])
        assert (cell.low, cell.high, cell.n, cell.tasks) == (pytest.approx(low), pytest.approx(high), 8, 8)
    low, high = _span(_macro_f1(i[PICKS].sum(axis=1)) - _macro_f1(g[PICKS].sum(axis=1)))
    cell = diff["hol_f1"]
    assert isinstance(cell, Estimate) and cell == pytest.approx(mine["hol_f1"] - oracle["hol_f1"])
    assert (cell.low, cell.high, cell.n, cell.tasks) == (pytest.approx(low), pytest.approx(high), 16, 8)
    # the success rates' differences resample the same way (one draw of scenes for both runs)
    verdicts_i, verdicts_g = np.array([s[2] for s in WEAK], float), np.array([s[2] for s in FULL], float)
    low, high = _span(verdicts_i[PICKS].mean(axis=1) - verdicts_g[PICKS].mean(axis=1))
    assert (diff["hol_sr"].low, diff["hol_sr"].high) == (pytest.approx(low), pytest.approx(high))
    # a run whose labels hold one class has no F1, so neither has the difference
    lone = StoredRun(tmp_path / "l", {"options": {"constraints": "identify"}}, "e",
                     [_scene_ep(*s) for s in WEAK if s[1]], "lone")
    _, lone_row, lone_diff = [r for r in identify_rows([given, lone]) if r["source"] == "ours"]
    assert lone_row["hol_f1"] is None and lone_diff["hol_f1"] is None
