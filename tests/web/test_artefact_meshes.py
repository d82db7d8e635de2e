"""The viewer's rooms and houses draw objects as meshes when the run chose a mesh geometry
level, as boxes otherwise (and say why when a level cannot be drawn)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from buildbench.harness.episode import Episode
from buildbench.web.artefacts import ArtefactContext, build_artefact

FLOOR = [[-2.0, 0.0, 2.0], [2.0, 0.0, 2.0], [2.0, 0.0, -2.0], [-2.0, 0.0, -2.0]]
ROOM = {"room_type": "bedroom", "bounds_bottom": FLOOR, "bounds_top": [[x, 2.6, z] for x, _, z in FLOOR],
        "objects": [{"id": "bed_0", "desc": "a king-size bed", "size": [1.8, 1.0, 2.1], "pos": [0.0, 0.0, -0.8],
                     "rot": [0, 0, 0, 1]},
                    {"id": "chair_0", "desc": "a wooden chair", "size": [0.5, 0.9, 0.5], "pos": [1.5, 0.0, 1.5],
                     "rot": [0, 0, 0, 1]}]}


def _room(options: dict[str, object], tmp_path: Path) -> dict[str, object]:
    episode = Episode("t", 0, "scenerevis", "oracle", "diagnose-act", 0, outcome={"scene": ROOM})
    return build_artefact("scenerevis", episode, ArtefactContext(tmp_path, lambda _: None, options))


def test_room_objects_are_boxes_by_default_and_meshes_at_the_procedural_level(tmp_path: Path) -> None:
    boxes = _room({}, tmp_path)
    assert {b["id"] for b in boxes["boxes"]} >= {"obj-0", "obj-1"} and not boxes["meshes"]
    meshes = _room({"geometry": "procedural"}, tmp_path)
    assert {m["id"] for m in meshes["meshes"]} == {"obj-0", "obj-1"}
    assert not {b["id"] for b in meshes["boxes"]} & {"obj-0", "obj-1"}  # walls stay boxes
    assert any("procedural meshes" in n for n in meshes["notes"])
    assert any("procedural geometry" in n for n in meshes["notes"])  # the physics ran at that level too
    bed = next(m for m in meshes["meshes"] if m["id"] == "obj-0")
    positions = np.asarray(bed["positions"]).reshape(-1, 3)
    assert len(bed["indices"]) == len(positions) > 36  # one vertex per corner of each triangle: flat faces
    # the bed stands in its box: x in [-0.9, 0.9], y in [0, 1], z in [-1.85, 0.25]
    assert positions.min(0) == pytest.approx([-0.9, 0.0, -1.85], abs=2e-3)
    assert positions.max(0) == pytest.approx([0.9, 1.0, 0.25], abs=2e-3)
    assert bed["status"] in ("ok", "collision", "out_of_bounds", "both")


def test_a_level_the_page_cannot_draw_leaves_boxes_and_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BUILDBENCH_3DFUTURE_DIR", raising=False)
    monkeypatch.delenv("BUILDBENCH_OBJAVERSE_DIR", raising=False)
    art = _room({"geometry": "mesh"}, tmp_path)
    assert not art["meshes"] and any("asset folder" in n for n in art["notes"])
    art = _room({"geometry": "wobbly"}, tmp_path)
    assert not art["meshes"] and any("not a level" in n for n in art["notes"])


def test_house_objects_are_meshes_at_the_procedural_level(tmp_path: Path) -> None:
    from buildbench.suites.legoeval.suite import load_tasks

    task = load_tasks("demo", 0)[0]
    episode = Episode(task.id, 0, "legoeval", "deterministic", "evaluate", 0, outcome={"verdicts": []})
    art = build_artefact("legoeval", episode, ArtefactContext(tmp_path, lambda _: task, {"geometry": "procedural"}))
    ids = {m["id"] for m in art["meshes"]}
    assert ids and all(i.startswith("obj-") for i in ids)
    assert not any(b["id"].startswith("obj-") for b in art["boxes"])
