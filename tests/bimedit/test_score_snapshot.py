"""Speed work must not change BIM-Edit scores (issue 24): every metric of ``score_edit``
(paper and strict), at full precision, on the demo tasks and on edits of the real models in
../shared/data/ifc, equals what ``fixtures/score_snapshot.json`` recorded.

Rebuild the record only for an intended change of scoring:
``.venv/bin/python tests/bimedit/test_score_snapshot.py --update``.

The last bits of the geometry scores depend on the CPU class (``buildbench.numeric_platform``:
numpy's and OpenBLAS's kernels round differently per instruction set), so the full-precision
record is kept per class (``--update add-platform`` adds this machine's once every verdict and
every score agrees to 1e-9); on a class not recorded, verdicts are compared exactly and the
scores to 1e-9.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ifcopenshell
import ifcopenshell.util.element
import pytest

from buildbench.numeric_platform import numeric_platform
from buildbench.suites.bimedit.check.edit import MODEL_CACHE, score_edit
from buildbench.suites.bimedit.generate.edits import (
    delete_element,
    host_direction,
    move_elements,
    slide_filling,
)
from buildbench.suites.bimedit.tasks import load_tasks

SNAPSHOT = Path(__file__).parent / "fixtures" / "score_snapshot.json"
SHARED_IFC = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "ifc"
#: (case name, input M0, ground truth M*, predictions by name, task spec)
Case = tuple[str, Path, Path, dict[str, Path], dict[str, Any]]


def _written(f: ifcopenshell.file, path: Path) -> Path:
    f.write(str(path))
    return path


def real_cases(out: Path) -> list[Case]:
    """A wall deleted from the Duplex and a door slid in the FZK-Haus, each with the reference as
    prediction, a wrong prediction and the unchanged input."""
    duplex = SHARED_IFC / "ifc2x3" / "duplex.ifc"
    f = ifcopenshell.open(str(duplex))
    hosts = [w for w in f.by_type("IfcWall") if w.HasOpenings]
    target = hosts[0].GlobalId
    delete_element(f, hosts[0])
    gt = _written(f, out / "duplex-gt.ifc")
    f = ifcopenshell.open(str(duplex))
    delete_element(f, [w for w in f.by_type("IfcWall") if w.HasOpenings][1])
    wrong = _written(f, out / "duplex-other-wall.ifc")
    cases: list[Case] = [("duplex-delete", duplex, gt, {"reference": gt, "other_wall": wrong, "unchanged": duplex},
                          {"operation": "delete", "target_guids": [target]})]
    fzk = SHARED_IFC / "ifc4" / "AC20-FZK-Haus.ifc"
    f = ifcopenshell.open(str(fzk))
    door = next(d for d in f.by_type("IfcDoor") if d.FillsVoids)
    targets = [door.GlobalId, ifcopenshell.util.element.get_filled_void(door).GlobalId]
    slide_filling(f, door, 0.3)
    gt = _written(f, out / "fzk-gt.ifc")
    f = ifcopenshell.open(str(fzk))
    slide_filling(f, f.by_guid(targets[0]), 0.3)
    again = _written(f, out / "fzk-same-edit.ifc")  # the same edit in another file (new timestamps)
    f = ifcopenshell.open(str(fzk))
    door = f.by_guid(targets[0])
    move_elements(f, [door], host_direction(door) * 0.3)
    wrong = _written(f, out / "fzk-door-only.ifc")
    cases.append(("fzk-update", fzk, gt, {"reference": gt, "same_edit": again, "door_without_opening": wrong,
                                         "unchanged": fzk},
                  {"operation": "update", "target_guids": targets}))
    return cases


def demo_cases(out: Path) -> list[Case]:
    """One task per base edit of the demo split; predictions: the reference, the unchanged input
    and the reference of the next base edit (another model: everything differs)."""
    tasks = {t.group_id: t for t in load_tasks("demo", out_dir=out)}
    firsts = list(tasks.values())
    cases: list[Case] = []
    for i, t in enumerate(firsts):
        other = firsts[(i + 1) % len(firsts)]
        preds = {"reference": Path(t.ground_truth_ifc), "unchanged": Path(t.input_ifc),
                 "other_task": Path(other.ground_truth_ifc)}
        cases.append((t.task_id, Path(t.input_ifc), Path(t.ground_truth_ifc), preds, t.score_spec()))
    return cases


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=lambda o: repr(o)))


def scores(cases: list[Case]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, m0, gt, preds, spec in cases:
        for pred_name, pred in preds.items():
            for strict in (False, True):
                MODEL_CACHE.clear()  # cold, as the benchmark scores
                d = _jsonable(score_edit(m0, gt, pred, spec, strict=strict, seed=0).to_dict())
                digest = hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()
                head = {k: d[k] for k in ("geometry", "semantics", "topology", "final", "solved", "reason")}
                yield f"{name}/{pred_name}/{'strict' if strict else 'paper'}", {**head, "all": digest}


def _recorded(part: str) -> dict[str, dict[str, Any]]:
    """The record of ``part`` by CPU class."""
    return {cls: dict(record[part]) for cls, record in json.loads(SNAPSHOT.read_text()).items()}


def _close(got: dict[str, Any], want: dict[str, Any]) -> bool:
    """The same cases and verdicts, every score within 1e-9 (the digest of all bits left out)."""
    if got.keys() != want.keys():
        return False
    for case, g in got.items():
        w = want[case]
        for key in g.keys() | w.keys():
            if key == "all":
                continue
            a, b = g.get(key), w.get(key)
            if isinstance(a, float) and isinstance(b, float):
                if not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
                    return False
            elif a != b:
                return False
    return True


def _check(got: dict[str, Any], part: str, platform_bits: Any) -> None:
    by_cpu = _recorded(part)
    if not platform_bits(by_cpu, got, f"BIM-Edit {part} scores"):
        assert any(_close(got, want) for want in by_cpu.values()), f"{part} scores differ beyond 1e-9"


def test_demo_scores_are_unchanged(tmp_path: Path, platform_bits: Any) -> None:
    _check(dict(scores(demo_cases(tmp_path))), "demo", platform_bits)


def test_real_model_scores_are_unchanged(tmp_path: Path, platform_bits: Any) -> None:
    for rel in ("ifc2x3/duplex.ifc", "ifc4/AC20-FZK-Haus.ifc"):
        if not (SHARED_IFC / rel).is_file():
            pytest.skip(f"shared IFC file {rel} not found under ../shared/data/ifc (the project's reference data)")
    _check(dict(scores(real_cases(tmp_path))), "real", platform_bits)


if __name__ == "__main__" and sys.argv[1:2] == ["--update"]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        record = {"demo": dict(scores(demo_cases(Path(tmp) / "demo"))),
                  "real": dict(scores(real_cases(Path(tmp))))}
    by_cpu = json.loads(SNAPSHOT.read_text()) if sys.argv[2:] == ["add-platform"] else {}
    for part, got in record.items():
        if by_cpu and not any(_close(got, r[part]) for r in by_cpu.values()):
            sys.exit(f"error: the {part} scores differ beyond 1e-9: not a CPU-class difference")
    by_cpu[numeric_platform()] = record
    SNAPSHOT.write_text(json.dumps(by_cpu, indent=1, sort_keys=True) + "\n")
    print(f"wrote {SNAPSHOT} ({len(by_cpu)} CPU classes)")
