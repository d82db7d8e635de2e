"""BIM-Edit scoring, cold (parsed-model cache cleared before every call, so reading and diffing
all three files counts).

Figures:

1. One task on a ~600-element generated model (issue target: ≤ 2 s; the paper took 1–2 min),
   beside the approach the spec's minimal implementation measured at ~15 s per task (section
   10): tessellate every product of the three files to diff them by vertex hashes, then the
   median Chamfer distance by an all-pairs distance matrix instead of a KD-tree.
2. Edits of the real models in ../shared/data/ifc (the Duplex, 39k entities; the FZK-Haus, 44k):
   a wall deleted, a door slid, a wall moved with its openings and windows, each scored for
   the same edit written again (what an agent that got it right commits) and for a wrong
   edit. Baseline: the same scorer with issue 24's optimisations switched off (the task's own
   models parsed in full rather than lazily, each file read twice, no tessellation shared
   between a task's models, the input-prediction statement diff computed twice), i.e. the
   code before them, timed in the same run, alternating with ours. Issue 24 sets no number
   here, so the goal is the least it asks: no slower than the code before, with every score
   identical (a difference fails the benchmark: a ratio between different results means
   nothing). CPU seconds (this process and its children: large elements are tessellated in forked
   children, `check.bounded`): the machine is shared. Skipped with a printed reason
   without the shared data.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import ifcopenshell
import ifcopenshell.geom
import ifcopenshell.util.element
import numpy as np
from _common import Figure, median_time
from scipy.spatial.distance import cdist

from buildbench.suites.bimedit.check import diff as check_diff
from buildbench.suites.bimedit.check import edit as check_edit
from buildbench.suites.bimedit.check.edit import MODEL_CACHE, EditTask, score_edit
from buildbench.suites.bimedit.check.geometry import sample_edit_set, score_from_distance
from buildbench.suites.bimedit.check.model import load_model
from buildbench.suites.bimedit.check.shapes import ShapeCache
from buildbench.suites.bimedit.generate.edits import (
    delete_element,
    dependents,
    host_direction,
    move_elements,
    slide_filling,
)
from buildbench.suites.bimedit.generate.scenes import write_scene


def _task_files(out: Path) -> tuple[Path, Path, Path, EditTask]:
    """A complex scene, the ground truth of "slide a door 0.4 m" and a door-without-opening prediction."""
    m0 = write_scene("complex", 11, out).path
    f = ifcopenshell.open(str(m0))
    door = f.by_type("IfcDoor")[7]
    task = EditTask("update", (door.GlobalId, ifcopenshell.util.element.get_filled_void(door).GlobalId))
    slide_filling(f, door, 0.4)
    gt = out / "gt.ifc"
    f.write(str(gt))
    f = ifcopenshell.open(str(m0))
    door = f.by_guid(task.target_guids[0])
    move_elements(f, [door], host_direction(door) * 0.4)
    pred = out / "pred.ifc"
    f.write(str(pred))
    return m0, gt, pred, task


def _naive_geometry(m0: Path, gt: Path, pred: Path, task: EditTask) -> float:
    """Full-model tessellation diff plus all-pairs Chamfer: the slow way to the same geometry score."""
    settings = ifcopenshell.geom.settings()
    settings.set("use-world-coords", True)
    signatures = []
    for path in (m0, gt, pred):
        f = ifcopenshell.open(str(path))
        sig = {}
        it = ifcopenshell.geom.iterator(settings, f, 1)
        if it.initialize():
            while True:
                shape = it.get()
                verts = np.round(np.asarray(shape.geometry.verts), 6)
                sig[shape.guid] = hashlib.blake2b(verts.tobytes(), digest_size=8).hexdigest()
                if not it.next():
                    break
        signatures.append(sig)
    clouds = []
    for path in (gt, pred):
        model = load_model(path)
        shapes = ShapeCache(model)
        meshes = [m for m in (shapes.mesh(k) for k in task.target_guids) if m is not None]
        clouds.append(sample_edit_set(meshes, 0))
    ref, prd = clouds
    d_pred = np.concatenate([cdist(prd[i:i + 2048], ref).min(axis=1) for i in range(0, len(prd), 2048)])
    d_ref = np.concatenate([cdist(ref[i:i + 2048], prd).min(axis=1) for i in range(0, len(ref), 2048)])
    joint = np.concatenate([ref, prd])
    diag = float(np.linalg.norm(joint.max(axis=0) - joint.min(axis=0)))
    return score_from_distance(float(np.median(np.concatenate([d_pred, d_ref]))), diag)


SHARED_IFC = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ifc"
REAL_MODELS = ("ifc2x3/duplex.ifc", "ifc4/AC20-FZK-Haus.ifc")
#: (input M0, ground truth M*, prediction M', task spec)
RealTask = tuple[Path, Path, Path, dict[str, Any]]


def _edited(src: Path, out: Path, edit: Any) -> Path:
    f = ifcopenshell.open(str(src))
    edit(f)
    f.write(str(out))
    return out


def _real_tasks(out: Path) -> list[RealTask]:
    """Three edits of the real models, each with a right prediction (the same edit written again)
    and a wrong one."""
    duplex, fzk = (SHARED_IFC / rel for rel in REAL_MODELS)
    f = ifcopenshell.open(str(duplex))
    walls = [w.GlobalId for w in f.by_type("IfcWall") if w.HasOpenings][:2]
    f = ifcopenshell.open(str(fzk))
    door = next(d for d in f.by_type("IfcDoor") if d.FillsVoids)
    door_targets = [door.GlobalId, ifcopenshell.util.element.get_filled_void(door).GlobalId]
    wall = max((w for w in f.by_type("IfcWall") if w.HasOpenings), key=lambda w: len(dependents(w)))
    wall_targets = [wall.GlobalId, *(e.GlobalId for e in dependents(wall))]

    def delete(guid: str) -> Any:
        return lambda m: delete_element(m, m.by_guid(guid))

    def slide(m: ifcopenshell.file) -> None:
        slide_filling(m, m.by_guid(door_targets[0]), 0.3)

    def move(guids: list[str]) -> Any:
        return lambda m: move_elements(m, [m.by_guid(g) for g in guids], np.array([0.0, 0.5, 0.0]))

    tasks = []
    for name, src, edit, wrong, spec in [
        ("duplex-delete", duplex, delete(walls[0]), delete(walls[1]),
         {"operation": "delete", "target_guids": walls[:1]}),
        ("fzk-door", fzk, slide, move(door_targets[:1]), {"operation": "update", "target_guids": door_targets}),
        ("fzk-wall", fzk, move(wall_targets), move(wall_targets[:1]),
         {"operation": "update", "target_guids": wall_targets}),
    ]:
        gt = _edited(src, out / f"{name}-gt.ifc", edit)
        right = _edited(src, out / f"{name}-right.ifc", edit)
        wrong_pred = _edited(src, out / f"{name}-wrong.ifc", wrong)
        tasks += [(src, gt, right, spec), (src, gt, wrong_pred, spec)]
    return tasks


@contextlib.contextmanager
def _before_issue_24() -> Iterator[None]:
    """The scorer as it was before issue 24's speed work: every model parsed in full and read
    again for its statements, every model tessellating its own elements, the statement diff of
    a model pair computed each time it is asked for."""
    def diff_each_time(base: Any, other: Any) -> tuple[set[str], set[str]]:
        new, old = check_diff._differing_statements(base, other)
        return set(new), set(old)

    with mock.patch.object(check_edit, "ShapeCache", lambda model, store=None, bounded=False: ShapeCache(model, bounded=bounded)), \
            mock.patch.object(check_diff, "differing_statements", diff_each_time), \
            mock.patch("buildbench.suites.bimedit.check.validity.differing_statements", diff_each_time), \
            mock.patch.object(check_edit, "load_model", lambda path, data=None, lazy=False: load_model(path)):
        yield


def _score_cold(tasks: list[RealTask]) -> list[str]:
    """Every task scored from nothing cached; each result as JSON, to compare runs exactly."""
    out = []
    for m0, gt, pred, spec in tasks:
        MODEL_CACHE.clear()
        out.append(json.dumps(score_edit(m0, gt, pred, spec, strict=True).to_dict(), sort_keys=True, default=repr))
    return out


def _cpu() -> float:
    """CPU seconds of this process and its ended children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _real_figure(out: Path, repeat: int = 3) -> Figure | None:
    missing = [rel for rel in REAL_MODELS if not (SHARED_IFC / rel).is_file()]
    if missing:
        print(f"bimedit real-model scoring skipped: {', '.join(missing)} not under {SHARED_IFC}")
        return None
    tasks = _real_tasks(out)
    ours_scores = _score_cold(tasks)  # warm-up: imports, kernel start-up
    with _before_issue_24():
        before_scores = _score_cold(tasks)
    differ = [i for i, (a, b) in enumerate(zip(ours_scores, before_scores, strict=True)) if a != b]
    if differ:
        raise RuntimeError(f"bimedit real-model scores differ from the code before issue 24 on task(s) {differ}: "
                           f"{[ours_scores[i] for i in differ]} vs {[before_scores[i] for i in differ]}")
    ours, before = [], []
    for _ in range(repeat):  # alternating, so both see the same load
        t0 = _cpu()
        _score_cold(tasks)
        ours.append(_cpu() - t0)
        with _before_issue_24():
            t0 = _cpu()
            _score_cold(tasks)
            before.append(_cpu() - t0)
    MODEL_CACHE.clear()
    ours_s, before_s = float(np.median(ours)) / len(tasks), float(np.median(before)) / len(tasks)
    print(f"bimedit real-model cold scoring: {before_s / ours_s:.2f}x the code before issue 24 "
          f"({ours_s:.3f} vs {before_s:.3f} CPU s per task, scores identical; the issue sets no number: "
          f"the goal is no slower than before)")
    return Figure(
        name=f"bimedit score one task on the real models (Duplex, FZK-Haus), cold, CPU s ({len(tasks)} tasks)",
        seconds=ours_s,
        baseline="same scorer with the issue-24 optimisations off (the code before them)",
        baseline_seconds=before_s, target_seconds=before_s,
        extra={"speedup_vs_before": round(before_s / ours_s, 3), "identical_scores": True,
               "tasks": len(tasks), "repeat": repeat})


def run() -> list[Figure]:
    with tempfile.TemporaryDirectory() as tmp:
        real = _real_figure(Path(tmp))
    with tempfile.TemporaryDirectory() as tmp:
        m0, gt, pred, task = _task_files(Path(tmp))
        n_elements = len(ifcopenshell.open(str(m0)).by_type("IfcElement"))

        def ours() -> None:
            MODEL_CACHE.clear()
            score_edit(m0, gt, pred, task)

        seconds = median_time(ours, repeat=3, warmup=1)
        MODEL_CACHE.clear()
        score_edit(m0, gt, pred, task)
        warm = median_time(lambda: score_edit(m0, gt, pred, task), repeat=3, warmup=0)
        result = score_edit(m0, gt, pred, task)
        # one timed run of the slow baseline (~35 s on a loaded machine), which also gives its score
        t0 = time.perf_counter()
        naive_geo = _naive_geometry(m0, gt, pred, task)
        baseline = time.perf_counter() - t0
    return [Figure(
        name="bimedit score one task (~600 elements, cold)", seconds=seconds,
        baseline="full-model tessellation diff + all-pairs Chamfer", baseline_seconds=baseline,
        target_seconds=2.0,
        extra={"elements": n_elements, "warm_cache_seconds": warm, "geometry": result.geometry,
               "naive_geometry": naive_geo, "semantics": result.semantics, "topology": result.topology}),
        *([real] if real is not None else [])]
