"""``.dhpack`` task packs: round trip, the released layout, bad packs, and runs from a pack."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from buildbench.harness import RunConfig, Runner, Store
from buildbench.suites.dreamhouse.cli import cli
from buildbench.suites.dreamhouse.dhpack import (
    DHPACK_FORMAT,
    PACK_VIEWS,
    SERVER_DEFAULTS,
    DhpackError,
    check_constraints,
    pack_task_of,
    read_dhpack,
    write_dhpack,
)
from buildbench.suites.dreamhouse.task_folders import load_dhpack
from buildbench.suites.dreamhouse.tasks import has_ground_truth, load_tasks, validate_task
from buildbench.suites.dreamhouse.views import VIEW_NAMES, png_bytes

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"


def _pngs(seed: int) -> list[bytes]:
    rng = np.random.default_rng([seed, 7])
    return [png_bytes(rng.integers(0, 256, (6, 6, 4), dtype=np.uint8)) for _ in VIEW_NAMES]


def _released_pack(path: Path, constraints: object, images: dict[str, bytes] | None = None,
                   fmt: str = DHPACK_FORMAT) -> Path:
    """A pack laid out as the released build_task_pack.py writes it (no ground-truth table)."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE metadata(key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("CREATE TABLE tasks(task_id TEXT PRIMARY KEY, style TEXT, description TEXT, constraints_json TEXT)")
    conn.execute("CREATE TABLE images(task_id TEXT, view TEXT, content BLOB, PRIMARY KEY(task_id, view))")
    conn.executemany("INSERT INTO metadata VALUES (?, ?)", [("format", fmt), ("source", "released")])
    conn.execute("INSERT INTO tasks VALUES (?, ?, ?, ?)",
                 ("AF_01_0018", "American Farmhouse", "Generate a 2-story house.", json.dumps(constraints)))
    pngs = images if images is not None else dict(zip(PACK_VIEWS, _pngs(1), strict=True))
    conn.executemany("INSERT INTO images VALUES (?, ?, ?)", [("AF_01_0018", v, c) for v, c in pngs.items()])
    conn.commit()
    conn.close()
    return path


def test_round_trip_keeps_tasks_views_and_ground_truth(tmp_path: Path) -> None:
    tasks = load_tasks("demo")[:2]
    images = {t.id: _pngs(k) for k, t in enumerate(tasks)}
    pack = write_dhpack(tmp_path / "p.dhpack", [pack_task_of(t, images[t.id]) for t in tasks],
                        metadata={"condition": "frame", "renderer": "gl"})
    meta, entries = read_dhpack(pack)
    assert meta["format"] == DHPACK_FORMAT and meta["condition"] == "frame"
    assert [e.task_id for e in entries] == [t.id for t in tasks]  # pack order kept
    for entry, task in zip(entries, tasks, strict=True):
        assert entry.constraints == task.inputs["constraints"]
        assert [entry.images[v] for v in VIEW_NAMES] == images[task.id]
        assert entry.target == dict(task.target)
    loaded = load_dhpack(pack, tmp_path / "views")
    for got, task in zip(loaded, tasks, strict=True):
        inputs = dict(got.inputs)
        views = inputs.pop("views")
        assert inputs == dict(task.inputs) and dict(got.target) == dict(task.target) and has_ground_truth(got)
        assert list(views) == ["frame"]  # the pack says which condition its views show
        assert Path(views["frame"]["front_right"]).read_bytes() == images[task.id][4]
        validate_task(got)
    # The released server reads the same tables: its fifth view is named "top".
    with sqlite3.connect(pack) as conn:
        views = sorted(v for (v,) in conn.execute("SELECT view FROM images WHERE task_id = ?", (tasks[0].id,)))
    assert views == sorted(PACK_VIEWS)


def test_a_released_pack_reads_with_defaults_and_no_ground_truth(tmp_path: Path) -> None:
    """The released pack builder writes no lot: it is the footprint plus 2 m (the walkthrough
    task's 7.32 x 10.97 m footprint has a 9.32 x 12.97 m lot), never the server's fixed 8 x 12 m."""
    pack = _released_pack(tmp_path / "r.dhpack", {"footprint_x": 7.32, "footprint_y": 10.97, "stories": 2})
    (task,) = load_dhpack(pack, tmp_path / "views")
    assert task.inputs["constraints"]["roof_type"] == SERVER_DEFAULTS["roof_type"]
    assert task.inputs["lot_size"] == {"width": 9.32, "depth": 12.97, "area": 120.88}
    assert task.inputs["collection"] == "AF_01_0018" and not has_ground_truth(task)
    assert set(task.inputs["views"]) == {"frame", "facade"}  # unknown condition: serve both


def test_the_released_example_constraints_are_accepted() -> None:
    path = SHARED / "data" / "dreamhouse" / "1_task_response.json"
    if not path.exists():
        pytest.skip(f"released harness example not found at {path}")
    doc = json.loads(path.read_text())
    assert check_constraints(doc["constraints"], "example") == doc["constraints"]


@pytest.mark.parametrize(
    ("constraints", "images", "fmt", "expected"),
    [
        ({}, None, "other-v2", "metadata format is 'other-v2'"),
        ({"stories": "two"}, None, DHPACK_FORMAT, "task AF_01_0018: constraints.stories must be an integer"),
        ({"footprint_x": float("nan")}, None, DHPACK_FORMAT, "constraints_json is not JSON (NaN"),
        ({"footprint_x": "7"}, None, DHPACK_FORMAT, "constraints.footprint_x must be a number"),
        ({"roof_type": "dome"}, None, DHPACK_FORMAT, "constraints.roof_type = 'dome' is not one of"),
        ({"lot_width": -1}, None, DHPACK_FORMAT, "constraints.lot_width = -1 is outside"),
        ({}, {"front": b"\x89PNG\r\n\x1a\n"}, DHPACK_FORMAT, "image 'back' is missing or not a PNG"),
        ([1, 2], None, DHPACK_FORMAT, "constraints must be a JSON object"),
    ],
)
def test_bad_packs_name_what_and_where(tmp_path: Path, constraints: object, images: dict[str, bytes] | None,
                                       fmt: str, expected: str) -> None:
    pack = _released_pack(tmp_path / "bad.dhpack", constraints, images, fmt)
    with pytest.raises(DhpackError, match=expected.replace("(", r"\(")) as info:
        read_dhpack(pack)
    assert str(pack) in str(info.value) and "\n" not in str(info.value)


def test_not_a_pack_and_bad_writes(tmp_path: Path) -> None:
    junk = tmp_path / "junk.dhpack"
    junk.write_bytes(b"not sqlite at all" * 10)
    with pytest.raises(DhpackError, match="junk.dhpack"):
        read_dhpack(junk)
    with pytest.raises(DhpackError, match="no such task pack"):
        read_dhpack(tmp_path / "missing.dhpack")
    task = load_tasks("demo")[0]
    entry = pack_task_of(task, _pngs(0))
    with pytest.raises(DhpackError, match="appears more than once"):
        write_dhpack(tmp_path / "dup.dhpack", [entry, entry])
    assert not list(tmp_path.glob(".dup.dhpack.tmp*")) and not (tmp_path / "dup.dhpack").exists()


def test_cli_pack_unpack_and_run_from_the_pack(tmp_path: Path) -> None:
    runner = CliRunner()
    packed = runner.invoke(cli, ["pack", "--split", "demo", "--limit", "1", "--out", str(tmp_path / "t.dhpack")])
    assert packed.exit_code == 0, packed.output
    out = runner.invoke(cli, ["unpack", str(tmp_path / "t.dhpack"), "--out", str(tmp_path / "u")])
    assert out.exit_code == 0 and "1 with a ground-truth frame" in out.output, out.output
    # The views say what drew them (the default renderer), so the run uses them as stored.
    from buildbench.render.raster import PIXEL_VERSION

    (record,) = [json.loads(line) for line in (tmp_path / "u" / "tasks.jsonl").read_text().splitlines()]
    assert record["inputs"]["views_made_by"] == f"raster v{PIXEL_VERSION}"
    config = RunConfig(suite="dreamhouse", agent="oracle", protocol="planner-atomic",
                       tasks=str(tmp_path / "u" / "tasks.jsonl"), workers=0)
    Runner(config, tmp_path / "run").run()
    with Store(tmp_path / "run", create=False) as store:
        (ep,) = list(store.episodes())
    assert ep.status == "ok" and ep.metrics["structural_pass"] == 1.0 and ep.metrics["visual_fidelity"] == 1.0
    bad = runner.invoke(cli, ["unpack", str(tmp_path / "nowhere.dhpack"), "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "no such task pack" in bad.output


def test_a_pack_without_ground_truth_scores_structure_only(tmp_path: Path) -> None:
    pack = _released_pack(tmp_path / "r.dhpack", {"footprint_x": 7.32, "footprint_y": 10.97, "lot_width": 9.32,
                                                  "lot_depth": 12.97})
    out = CliRunner().invoke(cli, ["unpack", str(pack), "--out", str(tmp_path / "u")])
    assert out.exit_code == 0 and "0 with a ground-truth frame" in out.output, out.output
    config = RunConfig(suite="dreamhouse", agent="safe-house", protocol="planner-atomic",
                       tasks=str(tmp_path / "u" / "tasks.jsonl"), workers=0, options={"action_format": "json"})
    Runner(config, tmp_path / "run").run()
    with Store(tmp_path / "run", create=False) as store:
        (ep,) = list(store.episodes())
    assert ep.status == "ok" and ep.metrics["structural_pass"] == 1.0
    # Undefined without the target frame: NaN, never a zero that would pull a mean down.
    assert all(math.isnan(ep.metrics[k]) for k in ("visual_fidelity", "topological_fidelity", "joint_pass",
                                                   "target_members"))
