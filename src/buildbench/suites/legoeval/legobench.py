"""The released LEGO-Bench layout (spec 5.3), read into tasks and written from our generator.

Layout, as the original code expects it::

    ROOT/full_data.json          # [{"instruction", "constraints": [str], "labels":
                                 #   [{"condition_idx": "0", "condition_type": "Floor Layout"}]}]
    ROOT/data_{i}/data_{i}.json  # the scene of entry i (AI2-THOR house JSON, "query" = instruction)

``ROOT`` may also be the folder holding ``data/full_data.json``. Scenes are matched to
entries by ``query == instruction`` (as the original does), falling back to the
``data_{i}`` folder of the entry's index when a scene has no query. The released scenes
are the hand-aligned ones, so their tasks are labelled valid with every constraint
holding; scenes from another generator (``scenes=`` a folder of house JSON files) get
no labels (``target["valid"]`` and ``["labels"]`` None) and are scored by success rate.

Our generator writes the same layout plus two keys the original ignores: each entry's
``programs`` (typed constraints) and, for the misaligned twin stored as
``data_{i}/misaligned_{i}.json``, ``misaligned_labels`` (one bool per constraint); the
reader turns those into the twin's task, so a written benchmark reads back to the same
260 tasks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from buildbench.harness import Task
from buildbench.inputs import read_text
from buildbench.jsonio import parse_json

from .constraints import CONSTRAINT_TYPES, ProgramError, parse_program
from .plans import plans_from_json
from .task_build import twin_ids
from .task_records import SUITE, bucket_of

FULL_DATA = "full_data.json"
_TYPE_CODES = {name.lower(): code for code, name in CONSTRAINT_TYPES.items()}


class LegoBenchError(ValueError):
    """The folder is not in the LEGO-Bench layout (message names the file and entry)."""


def find_full_data(root: str | Path) -> Path:
    """``full_data.json`` in ``root`` or ``root/data``."""
    root = Path(root)
    for candidate in (root / FULL_DATA, root / "data" / FULL_DATA, root):
        if candidate.is_file() and candidate.name == FULL_DATA:
            return candidate
    raise LegoBenchError(f"{root}: no {FULL_DATA} here or under data/ (is this the LEGO_Bench folder?)")


def _read_json(path: Path) -> Any:
    try:
        return parse_json(read_text(path))
    except OSError as exc:
        raise LegoBenchError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise LegoBenchError(f"{path}: not JSON: {exc.msg} at line {exc.lineno}") from None


def _type_code(label: Any, where: str) -> str:
    if isinstance(label, Mapping):
        label = label.get("condition_type")
    if isinstance(label, str):
        code = label if label in CONSTRAINT_TYPES else _TYPE_CODES.get(label.strip().lower())
        if code:
            return code
    raise LegoBenchError(f"{where}: constraint type {label!r} is not one of {', '.join(CONSTRAINT_TYPES.values())}")


def read_entries(full_data: Path) -> list[dict[str, Any]]:
    """The checked entries of ``full_data.json``: instruction, constraints (id, text, type),
    and our optional ``programs`` / ``misaligned_labels``."""
    data = _read_json(full_data)
    if not isinstance(data, list):
        raise LegoBenchError(f"{full_data}: expected a list of entries, got {type(data).__name__}")
    entries = []
    for i, e in enumerate(data):
        where = f"{full_data} entry {i}"
        if not isinstance(e, Mapping):
            raise LegoBenchError(f"{where}: expected an object, got {type(e).__name__}")
        instruction, texts, labels = e.get("instruction"), e.get("constraints"), e.get("labels", [])
        if not isinstance(instruction, str) or not instruction.strip():
            raise LegoBenchError(f"{where}.instruction: expected a non-empty string")
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            raise LegoBenchError(f"{where}.constraints: expected a non-empty list of strings")
        if not isinstance(labels, list) or len(labels) != len(texts):
            raise LegoBenchError(f"{where}.labels: expected one type label per constraint ({len(texts)})")
        by_idx = {str(lab.get("condition_idx", k)) if isinstance(lab, Mapping) else str(k): lab
                  for k, lab in enumerate(labels)}
        constraints = []
        for k, text in enumerate(texts):
            if str(k) not in by_idx:
                raise LegoBenchError(f"{where}.labels: no label with condition_idx {k}")
            constraints.append({"id": f"c{k}", "text": text.strip(),
                                "type": _type_code(by_idx[str(k)], f"{where}.labels[{k}]")})
        programs = e.get("programs")
        if programs is not None:
            if not isinstance(programs, list) or len(programs) != len(texts):
                raise LegoBenchError(f"{where}.programs: expected one program per constraint")
            for k, p in enumerate(programs):
                if p is not None:
                    try:
                        parse_program(p, f"{where}.programs[{k}]")
                    except ProgramError as exc:
                        raise LegoBenchError(str(exc)) from None
        twin_labels = e.get("misaligned_labels")
        if twin_labels is not None and (not isinstance(twin_labels, list) or len(twin_labels) != len(texts)
                                        or not all(isinstance(x, bool) for x in twin_labels)):
            raise LegoBenchError(f"{where}.misaligned_labels: expected one true/false per constraint")
        entries.append({"index": i, "instruction": instruction, "constraints": constraints,
                        "programs": programs, "misaligned_labels": twin_labels})
    return entries


def _scene_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json") if p.name != FULL_DATA)


def _match_scenes(entries: list[dict[str, Any]], files: list[Path], base: Path | None) -> dict[int, tuple[Path, dict]]:
    by_query: dict[str, tuple[Path, dict]] = {}
    by_index: dict[int, tuple[Path, dict]] = {}
    for path in files:
        if path.name.startswith("misaligned_"):
            continue
        scene = _read_json(path)
        if not isinstance(scene, Mapping):
            raise LegoBenchError(f"{path}: expected a house JSON object")
        query = scene.get("query")
        if isinstance(query, str) and query.strip():
            by_query.setdefault(query.strip(), (path, dict(scene)))
        if base is not None and path.parent.parent == base and path.stem == path.parent.name:
            by_index[int(path.stem.split("_")[-1])] = (path, dict(scene))
    out = {}
    for e in entries:
        hit = by_query.get(e["instruction"].strip())
        if hit is None and e["index"] in by_index and not str(by_index[e["index"]][1].get("query", "")).strip():
            hit = by_index[e["index"]]
        if hit is not None:
            out[e["index"]] = hit
    return out


def load_legobench(root: str | Path, *, scenes: str | Path | None = None) -> list[Task]:
    """Tasks from a LEGO-Bench folder (labelled: released scenes are aligned), or, with
    ``scenes``, from another generator's house JSON files matched by query (unlabelled).
    Entries without a matching scene are skipped; none matching at all is an error."""
    full_data = find_full_data(root)
    base = full_data.parent
    entries = read_entries(full_data)
    external = scenes is not None
    folder = Path(scenes) if scenes is not None else base
    if not folder.is_dir():
        raise LegoBenchError(f"{folder}: scene folder not found")
    matched = _match_scenes(entries, _scene_files(folder), None if external else base)
    if not matched:
        raise LegoBenchError(f"{folder}: no scene's query equals an instruction of {full_data}")
    tasks = []
    for e in entries:
        if e["index"] not in matched:
            continue
        _, scene = matched[e["index"]]
        n = len(e["constraints"])
        labels = None if external else [True] * n
        twin_path = base / f"data_{e['index']}" / f"misaligned_{e['index']}.json"
        paired = not external and e["misaligned_labels"] is not None and twin_path.is_file()
        tasks.append(_task(e, scene, labels, aligned=not external, twin=False, paired=paired))
        if paired:
            tasks.append(_task(e, _read_json(twin_path), e["misaligned_labels"], aligned=False, twin=True,
                               paired=True))
    return tasks


def _task(e: dict[str, Any], scene: dict, labels: list[bool] | None, *, aligned: bool, twin: bool,
          paired: bool) -> Task:
    """One task; the twins of a pair get :func:`twin_ids`, a scene without a twin its pair id."""
    pair = f"legobench-{e['index']:03d}"
    n = len(e["constraints"])
    violated = [c["id"] for c, ok in zip(e["constraints"], labels or [], strict=False) if not ok]
    return Task(
        id=twin_ids(pair)[1 if twin else 0] if paired else pair,
        suite=SUITE,
        inputs={"instruction": e["instruction"], "scene": scene, "constraints": e["constraints"]},
        target={"valid": None if labels is None else all(labels), "labels": labels,
                "programs": e["programs"] or [None] * n,
                "plans": plans_from_json(scene, e["programs"] or [None] * n, f"entry {e['index']} programs")},
        metadata={"pair": pair, "aligned": aligned if labels is not None else None, "n_constraints": n,
                  "bucket": bucket_of(n), "types": {t: sum(c["type"] == t for c in e["constraints"])
                                                    for t in CONSTRAINT_TYPES},
                  "violated": violated, "source": "lego-bench"},
    )


def write_benchmark(out: str | Path, *, n_pairs: int = 130, seed: int = 0) -> str:
    """Generate ``n_pairs`` pairs and write them in the LEGO-Bench layout under ``out``;
    returns a one-line summary."""
    from .generate import generate_benchmark

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    pairs = generate_benchmark(n_pairs, seed=seed)
    entries = []
    for i, pair in enumerate(pairs):
        folder = out / f"data_{i}"
        folder.mkdir(exist_ok=True)
        (folder / f"data_{i}.json").write_text(json.dumps(pair.aligned), "utf-8")
        (folder / f"misaligned_{i}.json").write_text(json.dumps(pair.misaligned), "utf-8")
        twin = pair.tasks()[1]
        entries.append({
            "instruction": pair.instruction,
            "constraints": [c.text for c in pair.constraints],
            "labels": [{"condition_idx": str(k), "condition_type": CONSTRAINT_TYPES[c.type]}
                       for k, c in enumerate(pair.constraints)],
            "programs": list(pair.tasks()[0].target["programs"]),
            "misaligned_labels": list(twin.target["labels"]),
        })
    (out / FULL_DATA).write_text(json.dumps(entries, indent=1), "utf-8")
    n_c = sum(len(e["constraints"]) for e in entries)
    return f"{len(pairs)} instructions ({n_c} constraints), {2 * len(pairs)} scenes"
