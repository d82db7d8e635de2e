"""DreamHouse tasks from the procedural generator.

A task's ``inputs`` carry what the paper gives the model (Prompt 0 Part 1: lot size,
stories, roof type, complexity) plus the released server's task fields (style, footprint,
wings, the description line) and the collection name the script must build into.
Its ``target`` names the ground truth by generator reference (task id, dataset seed,
generator version) instead of holding ~1,000 members inline, so the 1,200-task split
stays small enough to pickle to worker processes; :func:`ground_truth` rebuilds the
house (byte-identical, cached per process).
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from buildbench.harness import Task
from buildbench.harness.errors import BuildbenchError, ConfigError

from .generate import (
    GENERATOR_VERSION,
    ROOF_TYPES,
    STYLE_CODES,
    STYLE_NAMES,
    GeneratedHouse,
    TaskId,
    default_split,
    generate_structure,
)
from .model import Structure, parse_document

SUITE = "dreamhouse"
#: Splits: the paper's stratified 1,200 (13 styles × 4 roofs), one task per style, two per style.
SPLITS: tuple[str, ...] = ("default", "demo", "demo26")


@lru_cache(maxsize=32)
def _house(task_id: str, seed: int) -> GeneratedHouse:
    return generate_structure(task_id, seed)


def lot_size(house: GeneratedHouse) -> dict[str, float]:
    """The lot as Prompt 0 Part 1 injects it: width, depth and area, each to 2 decimals."""
    c: dict[str, Any] = dict(house.constraints)
    width, depth = float(c["lot_width"]), float(c["lot_depth"])
    return {"width": width, "depth": depth, "area": round(width * depth, 2)}


def make_task(task_id: str | TaskId, seed: int = 0) -> Task:
    """The task of one generated house.

    Raises:
        ConfigError: For a malformed task id.
    """
    house = _house(str(task_id), int(seed))
    c: dict[str, Any] = dict(house.constraints)
    params = house.params
    inputs: dict[str, Any] = {
        "task_id": house.task_id,
        "style": STYLE_NAMES[params.style],
        "description": house.description,
        "lot_size": lot_size(house),
        "stories": int(c["stories"]),
        "roof_type": str(c["roof_type"]),
        "complexity": str(c["complexity"]),
        "footprint": {"x": float(c["footprint_x"]), "y": float(c["footprint_y"])},
        "wings": int(c["wings"]),
        "constraints": c,
        "collection": house.task_id,
    }
    target = {
        "generator": {"task_id": house.task_id, "seed": int(seed), "version": GENERATOR_VERSION},
        "n_members": len(house.structure),
        "schedule": dict(house.schedule),
    }
    metadata = {
        "style": params.style,
        "roof_type": params.roof_type,
        "complexity": params.complexity,
        "stories": int(c["stories"]),
        "config": params.config,
    }
    return Task(id=house.task_id, suite=SUITE, inputs=inputs, target=target, metadata=metadata)


def ground_truth(task: Task) -> GeneratedHouse:
    """The generated house behind ``task`` (rebuilt from its generator reference, cached).

    Raises:
        ConfigError: When the task has no generator reference or was made by another
            generator version (its ground truth would differ).
    """
    ref = task.target.get("generator")
    if not isinstance(ref, dict) or "task_id" not in ref:
        raise ConfigError(f"task {task.id} has no generator reference in its target")
    if int(ref.get("version", -1)) != GENERATOR_VERSION:
        raise ConfigError(
            f"task {task.id} was made by generator version {ref.get('version')}; "
            f"this is version {GENERATOR_VERSION}, whose ground truth differs"
        )
    return _house(str(ref["task_id"]), int(ref.get("seed", 0)))


def has_ground_truth(task: Task) -> bool:
    """Whether ``task`` names its target frame (inline or by generator reference); tasks
    from a released ``.dhpack`` do not, and get structural metrics only."""
    return "structure" in task.target or "generator" in task.target


def validate_task(task: Task) -> None:
    """The check of a task read from a user's file (``--tasks``): the fields the env, the
    prompts and the scorer read, with their types.

    Raises:
        ValueError: Naming the first bad field.
    """
    try:
        _check_task_fields(task)
    except BuildbenchError as exc:
        raise ValueError(str(exc)) from None


def _check_task_fields(task: Task) -> None:
    from .dhpack import COMPLEXITIES, MAX_DIMENSION_M, MAX_STORIES, check_constraints, check_target

    inputs = task.inputs
    for key, kind in (("lot_size", dict), ("constraints", dict), ("footprint", dict), ("collection", str),
                      ("roof_type", str), ("complexity", str), ("description", str), ("style", str)):
        if not isinstance(inputs.get(key), kind):
            raise ValueError(f"inputs.{key}: missing or not {'an object' if kind is dict else 'a string'}")
    # The prompt and the agents read these beside the constraints: the same ranges hold for them.
    for key, low, top in (("stories", 1, MAX_STORIES), ("wings", 0, 16)):
        value = inputs.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= top:
            raise ValueError(f"inputs.{key}: missing or not an integer in [{low}, {top}], got {value!r}")
    for key, allowed in (("roof_type", ROOF_TYPES), ("complexity", COMPLEXITIES)):
        if inputs[key] not in allowed:
            raise ValueError(f"inputs.{key}: {inputs[key]!r} is not one of {', '.join(allowed)}")
    check_constraints(inputs["constraints"], "inputs")
    made_by = inputs.get("views_made_by")  # .views_made_by.MADE_BY_KEY; a wrong type would read as unknown
    if made_by is not None and (not isinstance(made_by, str) or not made_by.strip()):
        raise ValueError(f"inputs.views_made_by: must be the text naming what drew the views (as 'raster v2'), "
                         f"got {made_by!r:.60}")
    for part, key in (("lot_size", "width"), ("lot_size", "depth"), ("lot_size", "area"), ("footprint", "x"),
                      ("footprint", "y")):
        value = inputs[part].get(key)
        most = MAX_DIMENSION_M ** 2 if key == "area" else MAX_DIMENSION_M
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= most:
            raise ValueError(f"inputs.{part}.{key}: missing or not a number in (0, {most:g}], got {value!r}")
    check_target(task.target)


def target_structure(task: Task) -> Structure:
    """The ground-truth frame of ``task``: inline ``target["structure"]`` if present, else regenerated."""
    inline = task.target.get("structure")
    if inline is not None:
        return parse_document(inline)
    return ground_truth(task).structure


def demo_ids(per_style: int = 1) -> list[TaskId]:
    """A small stratified sample of the default split: ``per_style`` tasks per style,
    roof types in turn across styles (so 13 tasks cover every style and every roof)."""
    split = default_split()
    out: list[TaskId] = []
    for s, code in enumerate(STYLE_CODES):
        for k in range(per_style):
            roof = ROOF_TYPES[(s + k) % len(ROOF_TYPES)]
            out.append(next(t for t in split if t.style == code and t.index % len(ROOF_TYPES) ==
                            ROOF_TYPES.index(roof)))
    return out


def load_tasks(split: str, seed: int = 0) -> list[Task]:
    """Tasks of a split: ``default`` (the stratified 1,200), ``demo`` (13), ``demo26`` (26).

    The run seed does not change the houses: the benchmark's structures are fixed by
    their ids (dataset seed 0), as the paper's dataset is.

    Raises:
        ConfigError: For an unknown split.
    """
    if split == "default":
        ids = default_split()
    elif split == "demo":
        ids = demo_ids(1)
    elif split == "demo26":
        ids = demo_ids(2)
    else:
        raise ConfigError(f"unknown dreamhouse split {split!r}; splits: {', '.join(SPLITS)}")
    return _cached_tasks(split, [str(t) for t in ids])


@lru_cache(maxsize=1)
def _source_fingerprint() -> str:
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for source in sorted([*(here / "generate").glob("*.py"), here / "tasks.py"]):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:12]


def _cached_tasks(split: str, ids: list[str]) -> list[Task]:
    """Tasks of ``ids``, read from the cache when it holds exactly them.

    Building a task generates its house (its prompt fields describe it), which costs ~30–50 s
    for the 1,200-task split. The cache folder is keyed by the generator version and a hash
    of the generator's source and of this module, so an edited generator never serves stale
    prompt fields beside a freshly generated ground truth.
    """
    from buildbench.harness.cache import cache_dir

    path = cache_dir(SUITE, f"v{GENERATOR_VERSION}-{_source_fingerprint()}") / f"{split}.jsonl"
    try:
        cached = [Task.from_dict(json.loads(line)) for line in path.read_text().splitlines() if line]
        if [t.id for t in cached] == ids:
            return cached
    except (OSError, ValueError, KeyError):
        pass  # absent, unreadable or stale: rebuild below
    # Normalised through JSON so a fresh list and a cached one are equal, type for type.
    tasks = [Task.from_dict(json.loads(json.dumps(make_task(t).to_dict()))) for t in ids]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text("".join(json.dumps(t.to_dict()) + "\n" for t in tasks))
        tmp.replace(path)
    except OSError:
        pass  # a read-only cache only costs time
    return tasks
