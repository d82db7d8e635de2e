"""Tasks on a user's own IFC model: each schema and unit → tasks → the oracle scores 1.0 → batch
re-scoring agrees with the per-task scorer; the real split; malformed input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import zip_longest
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness.errors import ConfigError
from buildbench.suites.bimedit.generate.describe import resolve
from buildbench.suites.bimedit.generate.tasks.oracle import write_oracle_prediction
from buildbench.suites.bimedit.generate.tasks.usergen import (
    REPORT_FILE,
    GenerationReport,
    generate_from_ifc,
    interleaved,
    open_scene,
)
from buildbench.suites.bimedit.rescore import rescore, summary
from buildbench.suites.bimedit.tasks import IFC_DIR_ENV, BimTask, load_task_file, load_tasks, read_tasks

SHARED_IFC = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "ifc"
FIXTURE = Path(__file__).parent / "fixtures" / "tiny_house_ifc4x3_ft.ifc"

#: (file under shared/data/ifc, schema, unit, tasks to generate: None = the full design)
SHARED_CASES = [("ifc2x3/IfcOpenHouse.ifc", "IFC2X3", "mm", None),
                ("ifc4/IfcOpenHouse_IFC4.ifc", "IFC4", "mm", None),
                ("ifc4x3/wall_door_columnt_rgb4x3.ifc", "IFC4X3", "ft", None),
                ("ifc2x3/duplex.ifc", "IFC2X3", "m", 36),
                ("ifc4/AC20-FZK-Haus.ifc", "IFC4", "m", 36)]


def shared(rel: str) -> Path:
    path = SHARED_IFC / rel
    if not path.is_file():
        pytest.skip(f"shared IFC file {rel} not found under ../shared/data/ifc (the project's reference data)")
    return path


def one_per_group(tasks: list[BimTask]) -> list[BimTask]:
    """One task per base edit, the phrasing rotating, so every edit's M* is checked once."""
    groups: dict[str, list[BimTask]] = {}
    for t in tasks:
        groups.setdefault(t.group_id, []).append(t)
    return [g[i % len(g)] for i, g in enumerate(groups.values())]


def one_per_cell(tasks: list[BimTask], most: int = 6) -> list[BimTask]:
    """A sample for the quick tests: one base edit per (element, operation), at most ``most``,
    taken from the operations in turn so creates, updates and deletes all appear."""
    cells: dict[tuple[str, str], BimTask] = {}
    for t in one_per_group(tasks):
        cells.setdefault((t.element, t.operation), t)
    by_op: dict[str, list[BimTask]] = {}
    for t in cells.values():
        by_op.setdefault(t.operation, []).append(t)
    return [t for row in zip_longest(*by_op.values()) for t in row if t is not None][:most]


def oracle_agrees(tasks: list[BimTask], folder: Path) -> list[dict]:
    """Oracle predictions for ``tasks`` scored in batch; each row also checked against the per-task CLI."""
    preds = folder / "preds"
    preds.mkdir(exist_ok=True)
    for t in tasks:
        write_oracle_prediction(t, preds / f"{t.task_id}.ifc")
    rows = rescore(tasks, preds)
    return [r.to_dict() for r in rows]


# Each model's tests share one worker under `--dist loadgroup`: the generation (up to ~15 s a
# model) is then made once per model, not once per worker that happens to get one of its tests.
@pytest.fixture(scope="module", ids=[c[0].split("/")[-1] for c in SHARED_CASES],
                params=[pytest.param(c, marks=pytest.mark.xdist_group(f"bimedit-user-ifc-{c[0]}")) for c in SHARED_CASES])
def shared_case(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[tuple[list[BimTask], GenerationReport, Path, tuple]]:
    rel, schema, unit, n = request.param
    out = tmp_path_factory.mktemp(rel.split("/")[-1].replace(".", "_"))
    tasks, report = generate_from_ifc(shared(rel), out, n=n, seed=0)
    yield tasks, report, out, request.param


@pytest.fixture(scope="module")
def group_rows(shared_case: tuple) -> dict[str, dict]:
    """The oracle's rows for one task of every base edit of a model, scored once in batch: the
    quick sample of `test_each_schema_gives_tasks_the_oracle_solves` is a subset of them."""
    tasks, _, out, _ = shared_case
    return {r["task_id"]: r for r in oracle_agrees(one_per_group(tasks), out)}


def test_each_schema_gives_tasks_the_oracle_solves(shared_case: tuple, group_rows: dict[str, dict]) -> None:
    tasks, report, _, (rel, schema, unit, n) = shared_case
    name = rel.split("/")[-1]
    assert report.models[name]["schema"].startswith(schema)
    assert {t.unit for t in tasks} == {unit}
    assert len({t.group_id for t in tasks}) * 3 == len(tasks) and len(tasks) >= 9
    if n is not None:
        assert len(tasks) == n
        # a size below the design keeps the mix: several elements and all three operations
        assert len({t.element for t in tasks}) >= 4 and {t.operation for t in tasks} == {"create", "update", "delete"}
    sample = one_per_cell(tasks)
    rows = [group_rows[t.task_id] for t in sample]
    assert all(r["status"] == "scored" for r in rows)
    low = [(r["task_id"], r["final"], r["reason"]) for r in rows if r["final"] < 1.0 - 1e-9 or not r["solved"]]
    assert not low


@pytest.mark.slow
def test_every_generated_edit_solves(shared_case: tuple, group_rows: dict[str, dict]) -> None:
    """Every base edit (its three phrasings share M0, M* and oracle code) scores 1.0 in batch."""
    tasks = shared_case[0]
    rows = list(group_rows.values())
    assert len(rows) * 3 == len(tasks)
    assert all(r["status"] == "scored" and r["solved"] and r["final"] == pytest.approx(1.0) for r in rows)


def test_descriptions_pick_out_their_element(shared_case: tuple) -> None:
    tasks, _, _, _ = shared_case
    scene_path = next(Path(t.input_ifc) for t in tasks if "/scenes/" in t.input_ifc)
    scene = open_scene(scene_path)
    checked = 0
    for t in tasks:
        if t.category == "direct" or t.operation == "create" or Path(t.input_ifc) != scene_path:
            continue
        assert resolve(scene.index, t.facts) == [t.target_guids[0]], t.task_id
        checked += 1
    assert checked > 0


def test_batch_cli_agrees_with_the_single_task_scorer(shared_case: tuple, capsys: pytest.CaptureFixture) -> None:
    tasks, _, out, _ = shared_case
    sample = one_per_cell(tasks, most=2)
    preds = out / "cli-preds"
    preds.mkdir(exist_ok=True)
    for t in sample:
        write_oracle_prediction(t, preds / f"{t.task_id}.ifc")
    # a prediction is missing for every other task of the file: reported, not scored as zero
    assert main(["bimedit", "score", "--tasks", str(out / "tasks.jsonl"), "--preds", str(preds), "--json"]) == 2
    batch = json.loads(capsys.readouterr().out)
    rows = {r["task_id"]: r for r in batch["tasks"]}
    assert batch["summary"]["scored"] == len(sample)
    assert batch["summary"]["missing"] == len(tasks) - len(sample)
    assert batch["summary"]["final"] == pytest.approx(1.0)
    for t in sample:
        single = out / f"{t.task_id}.json"
        single.write_text(json.dumps(t.to_dict()))
        assert main(["bimedit", "score", "--task", str(single), "--pred", str(preds / f"{t.task_id}.ifc"),
                     "--json"]) == 0
        one = json.loads(capsys.readouterr().out)
        for key in ("geometry", "semantics", "topology", "final", "solved"):
            assert rows[t.task_id][key] == one[key], (t.task_id, key)
    assert all(rows[t.task_id]["status"] == "missing" for t in tasks if t not in sample)


def test_tiny_fixture_in_feet_end_to_end(tmp_path: Path) -> None:
    """Our own foreign-style model (IFC4X3, feet, no quantities, no boundaries): every task solves."""
    tasks, report = generate_from_ifc(FIXTURE, tmp_path, seed=0)
    assert {t.unit for t in tasks} == {"ft"} and {t.scene for t in tasks} == {"complex"}
    cells = {(t.element, t.operation) for t in tasks}
    assert {("wall", "update"), ("door", "update"), ("window", "update"), ("column", "create"),
            ("slab", "create"), ("space", "delete")} <= cells
    assert report.skipped and (tmp_path / REPORT_FILE).read_text().count("could not make") >= 1
    rows = oracle_agrees(one_per_cell(tasks, most=8), tmp_path)
    assert all(r["status"] == "scored" and r["final"] == pytest.approx(1.0) and r["solved"] for r in rows)
    # the folder is self-contained: the task file loads through the suite's task-file reader
    harness = load_task_file(tmp_path)
    assert len(harness) == len(tasks) and Path(harness[0].inputs["ifc_path"]).is_file()


def test_generation_is_deterministic(tmp_path: Path) -> None:
    a, _ = generate_from_ifc(FIXTURE, tmp_path / "a", n=12, seed=3)
    b, _ = generate_from_ifc(FIXTURE, tmp_path / "b", n=12, seed=3)
    assert (tmp_path / "a" / "tasks.jsonl").read_bytes() == (tmp_path / "b" / "tasks.jsonl").read_bytes()
    for ta, tb in zip(a, b, strict=True):
        assert Path(ta.ground_truth_ifc).read_bytes() == Path(tb.ground_truth_ifc).read_bytes()


def test_requested_size_is_met_with_the_mix_of_cells(tmp_path: Path) -> None:
    tasks, report = generate_from_ifc(FIXTURE, tmp_path, n=30, seed=0)
    assert len(tasks) == 30 == report.made
    first = interleaved(0)[:18]
    assert len({(e, o) for e, o, _ in first}) == 18  # the first 18 slots cover every cell once


def test_generate_cli_reports_what_it_could_not_make(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "tasks"
    assert main(["bimedit", "generate", "--ifc", str(FIXTURE), "--n", "9", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "model tiny_house_ifc4x3_ft.ifc: IFC4X3, unit ft" in text and "wrote 9 tasks" in text
    assert len(read_tasks(out / "tasks.jsonl")) == 9


def test_malformed_ifc_gives_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "broken.ifc"
    bad.write_text("ISO-10303-21;\nHEADER;\nthis is not STEP\n")
    for path in [bad, SHARED_IFC / "malformed" / "Ifc4_SampleHouse_xbim_resave.ifc"]:
        if not path.is_file():
            continue  # the shared negative example is optional
        assert main(["bimedit", "generate", "--ifc", str(path), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and path.name in err[0]


def test_batch_score_input_errors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["bimedit", "score", "--tasks", str(tmp_path / "none.jsonl"), "--preds", str(tmp_path)]) == 2
    assert main(["bimedit", "score", "--task", "x.json", "--preds", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error: ") for line in err)


def test_batch_statuses_missing_error_and_bad_prediction(tmp_path: Path) -> None:
    """A missing prediction, a broken one and a task whose ground truth is gone all stay out of the
    means (the single-task scorer refuses a broken prediction too)."""
    tasks, _ = generate_from_ifc(FIXTURE, tmp_path, n=12, seed=0)
    tasks = [t for t in tasks if t.category == "direct"][:4]
    preds = tmp_path / "preds"
    preds.mkdir()
    (preds / f"{tasks[0].task_id}.ifc").write_text("ISO-10303-21;\nnot ifc\n")
    for t in tasks[1:3]:
        write_oracle_prediction(t, preds / f"{t.task_id}.ifc")
    Path(tasks[2].ground_truth_ifc).unlink()
    rows = rescore(tasks, preds)
    assert [r.status for r in rows] == ["error", "scored", "error", "missing"]
    assert rows[0].score is None and "not a readable IFC model" in rows[0].reason
    info = summary(rows)
    assert (info["scored"], info["errors"], info["missing"]) == (1, 2, 1)
    assert info["final"] == pytest.approx(1.0)


def test_real_split_needs_a_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(IFC_DIR_ENV, raising=False)
    with pytest.raises(ConfigError, match=IFC_DIR_ENV):
        load_tasks("real")
    monkeypatch.setenv(IFC_DIR_ENV, "/no/such/folder")
    with pytest.raises(ConfigError, match="no such folder"):
        load_tasks("real")


def test_run_reads_a_generated_task_folder(tmp_path: Path) -> None:
    out = tmp_path / "tasks"
    generate_from_ifc(FIXTURE, out, n=6, seed=0)
    run_dir = tmp_path / "run"
    assert main(["run", "bimedit", "--tasks", str(out), "--limit", "2", "--workers", "0", "--run-dir", str(run_dir),
                 "-q"]) == 0
    from buildbench.harness import run_report

    rep = run_report(run_dir)
    assert rep["episodes"] == 2 and rep["unscored"] == 0


@pytest.mark.slow
def test_real_split_uses_the_buildings_of_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The complex half on the folder's buildings (an unreadable one skipped and reported); the
    simple half on synthetic scenes, as in the default split."""
    buildings = tmp_path / "ifc"
    buildings.mkdir()
    (buildings / "tiny.ifc").write_bytes(FIXTURE.read_bytes())
    (buildings / "broken.ifc").write_text("ISO-10303-21;\nHEADER;\nthis is not STEP\n")
    monkeypatch.setenv(IFC_DIR_ENV, str(buildings))
    monkeypatch.setenv("BUILDBENCH_CACHE", str(tmp_path / "cache"))
    tasks = load_tasks("real", seed=0)
    simple = [t for t in tasks if t.scene == "simple"]
    real = [t for t in tasks if t.scene == "complex"]
    assert len(simple) == 162 and real
    assert all("/scenes/real/tiny.ifc" in t.input_ifc or "/inputs/" in t.input_ifc for t in real)
    folder = Path(real[0].input_ifc).parents[2 if "/scenes/real/" in real[0].input_ifc else 1]
    report = (folder / REPORT_FILE).read_text()
    assert "skipped model broken.ifc" in report and "could not make" in report
    rows = oracle_agrees(one_per_group(real), tmp_path)
    assert all(r["status"] == "scored" and r["solved"] for r in rows)
    assert load_tasks("real", seed=0) == tasks  # the second load reads the cache


def test_ifc2x3_ground_truths_are_byte_stable(tmp_path: Path) -> None:
    """IFC2X3 edits stamp owner histories with the clock; ground truths must not change run to run."""
    src = shared("ifc2x3/IfcOpenHouse.ifc")
    a, _ = generate_from_ifc(src, tmp_path / "a", n=12, seed=1)
    b, _ = generate_from_ifc(src, tmp_path / "b", n=12, seed=1)
    assert any(t.operation == "create" for t in a)
    for ta, tb in zip(a, b, strict=True):
        assert Path(ta.ground_truth_ifc).read_bytes() == Path(tb.ground_truth_ifc).read_bytes()
        assert Path(ta.input_ifc).read_bytes() == Path(tb.input_ifc).read_bytes()


@pytest.mark.slow
def test_real_split_on_the_shared_buildings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's real buildings (IFC2X3, IFC4, IFC4X3; m, mm, ft) as the complex half: all 54
    complex base edits are made, across several buildings; the malformed sample is skipped."""
    if not (SHARED_IFC / "ifc4" / "AC20-FZK-Haus.ifc").is_file():
        pytest.skip("shared IFC buildings not found under ../shared/data/ifc (the project's reference data)")
    monkeypatch.setenv(IFC_DIR_ENV, str(SHARED_IFC))
    monkeypatch.setenv("BUILDBENCH_CACHE", str(tmp_path / "cache"))
    tasks = load_tasks("real", seed=0)
    real = [t for t in tasks if t.scene == "complex"]
    assert len(tasks) == 324 and len(real) == 162
    used = {Path(t.input_ifc).name for t in real if "/scenes/real/" in t.input_ifc}
    assert {"duplex.ifc", "AC20-FZK-Haus.ifc", "wall_door_columnt_rgb4x3.ifc"} <= used
    assert {t.unit for t in real} >= {"m", "mm", "ft"}
    report = (Path(real[0].ground_truth_ifc).parents[1] / REPORT_FILE).read_text()
    assert "skipped model Ifc4_SampleHouse_xbim_resave.ifc" in report
    rows = oracle_agrees(one_per_cell(real, most=6), tmp_path)
    assert all(r["status"] == "scored" and r["solved"] for r in rows)
