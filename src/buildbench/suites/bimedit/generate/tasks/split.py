"""Generate task splits: scenes, inputs, ground truths and the JSONL task file.

The default split mirrors the paper's composition (Table 4; spec section 2.2): 54 base
edits (per element create/update/delete: wall 4/4/4, slab 4/4/4, space 4/4/4, door
3/1/2, window 1/3/2, column 2/2/2), each made on a simple and on a complex scene and
phrased three ways — 324 tasks, 108 per instruction type, 162 per scene type; the three
phrasings share one M0 and one M*. Scene files are shared between base edits (simple
scenes are cheap; complex ones take seconds, so a few are reused).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import ifcopenshell
import numpy as np

from buildbench.parallel import PROCESS, Backend, map_ordered
from buildbench.suites.bimedit.check.model import load_model
from buildbench.suites.bimedit.check.shapes import ShapeCache
from buildbench.suites.bimedit.generate.describe import DescriptionIndex, resolve
from buildbench.suites.bimedit.generate.scenes import write_scene
from buildbench.suites.bimedit.generate.tasks import creates, recipes
from buildbench.suites.bimedit.generate.tasks.oracle import apply_and_write
from buildbench.suites.bimedit.generate.tasks.recipes import Edit, NoCandidate, Scene
from buildbench.suites.bimedit.task_records import (
    CATEGORIES,
    IFC_CLASSES,
    TASKS_FILE,
    BimTask,
    TaskId,
    write_tasks,
)

#: Base edits per (element, operation): paper Table 4 divided by 6 (3 phrasings × 2 scene kinds).
BASE_COUNTS: dict[tuple[str, str], int] = {
    ("wall", "create"): 4, ("wall", "update"): 4, ("wall", "delete"): 4,
    ("slab", "create"): 4, ("slab", "update"): 4, ("slab", "delete"): 4,
    ("space", "create"): 4, ("space", "update"): 4, ("space", "delete"): 4,
    ("door", "create"): 3, ("door", "update"): 1, ("door", "delete"): 2,
    ("window", "create"): 1, ("window", "update"): 3, ("window", "delete"): 2,
    ("column", "create"): 2, ("column", "update"): 2, ("column", "delete"): 2,
}
#: Simple scenes per round of base edits and complex scenes (each ~4-9 s to build) reused across them.
N_SIMPLE_SCENES, N_COMPLEX_SCENES = 9, 2
#: The demo split: four simple-scene base edits, three phrasings each.
DEMO_GROUPS: tuple[tuple[str, str], ...] = (("door", "update"), ("wall", "delete"), ("wall", "create"),
                                            ("space", "create"))


@dataclass(frozen=True)
class BaseEdit:
    """One base edit to make: its id parts, variant and scene."""

    element: str
    operation: str
    scene: str
    index: int
    variant: int
    scene_seed: int
    unit: str


def _stable(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def write_edit_models(edit: Edit, path: Path, out: Path, group: str, seed: int) -> tuple[Path, Path]:
    """Write a task group's input model (``path`` itself when the edit prepares nothing) and
    its ground truth under ``out``, with GlobalIds seeded by the group; return both paths."""
    m0 = path
    if edit.prepare is not None:
        m0 = out / "inputs" / f"{group}.ifc"
        m0.parent.mkdir(parents=True, exist_ok=True)
        apply_and_write(edit.prepare, path, m0, _stable(group + "/input"))
    gt = out / "truth" / f"{group}.ifc"
    gt.parent.mkdir(parents=True, exist_ok=True)
    apply_and_write(edit.code, m0, gt, _stable(group) ^ seed)
    return m0, gt


def base_edits(seed: int, rounds: int = 1) -> Iterator[BaseEdit]:
    """The base edits of ``rounds`` copies of the paper's composition (round r uses fresh scenes)."""
    for r in range(rounds):
        for scene in ("simple", "complex"):
            n = 0
            for (element, op), count in BASE_COUNTS.items():
                for k in range(count):
                    if scene == "simple":
                        s = seed * 1000 + r * 100 + n % N_SIMPLE_SCENES
                        unit = "mm" if n % N_SIMPLE_SCENES == 2 else "m"
                    else:
                        s = seed * 1000 + r * 100 + 50 + n % N_COMPLEX_SCENES
                        unit = "m"
                    yield BaseEdit(element, op, scene, r * count + k + 1, k, s, unit)
                    n += 1


def _recipe(scene: Scene, be: BaseEdit, rng: np.random.Generator) -> Edit:
    cls = IFC_CLASSES[be.element]
    if be.operation == "delete":
        return recipes.delete_any(scene, cls, rng)
    if be.operation == "update":
        if be.element in ("door", "window"):
            return recipes.update_filling(scene, be.element, be.variant, rng)
        if be.element == "column":
            return recipes.update_column(scene, be.variant, rng)
        if be.element == "wall":
            return recipes.update_wall(scene, be.variant, rng)
        return recipes.update_slab_or_space(scene, cls, be.variant, rng)
    if be.element == "column":
        return creates.create_column(scene, rng)
    if be.element == "wall":
        return creates.create_wall(scene, rng)
    if be.element in ("slab", "space"):
        return creates.recreate_extrusion(scene, cls, rng)
    return creates.recreate_filling(scene, be.element, rng)


class _Scenes:
    """Scene files and their description indexes, built once per generation run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[tuple[str, int, str], tuple[Path, Scene]] = {}

    def get(self, kind: str, seed: int, unit: str) -> tuple[Path, Scene]:
        key = (kind, seed, unit)
        if key not in self._cache:
            path = self.root / f"{kind}-s{seed}-{unit}-IFC4.ifc"
            if not path.is_file():
                write_scene(kind, seed, self.root, unit=unit)
            model = load_model(path)
            index = DescriptionIndex(model, ShapeCache(model))
            self._cache[key] = (path, Scene(model.file, index, model.unit_scale_m))
        return self._cache[key]


def _index(path: Path) -> DescriptionIndex:
    model = load_model(path)
    return DescriptionIndex(model, ShapeCache(model))


def verify_edit(edit: Edit, scene: Scene, m0: Path, gt: Path) -> dict[str, dict]:
    """Run every indirect description's query; returns the facts per category.

    Raises:
        NoCandidate: a query does not pick out exactly the intended element.
    """
    truth_index = None
    created = None
    for cat, check in edit.checks.items():
        if check.on == "input":
            want = [check.guid]
            got = resolve(scene.index, check.facts)
        else:
            if truth_index is None:
                truth_index = _index(gt)
                before = {e.GlobalId for e in ifcopenshell.open(str(m0)).by_type(edit.created_class or "IfcRoot")}
                created = [e.GlobalId for e in truth_index.model.file.by_type(edit.created_class or "IfcRoot")
                           if e.GlobalId not in before]
            want, got = created or [], resolve(truth_index, check.facts)
        if len(want) != 1 or got != want:
            raise NoCandidate(f"{cat} description resolves to {got}, not {want}")
    return {cat: dict(c.facts) for cat, c in edit.checks.items()}


def make_group(be: BaseEdit, scenes: _Scenes, out: Path, seed: int) -> list[BimTask]:
    """Generate one base edit's M0 and M* and its three tasks.

    Raises:
        RuntimeError: no usable target was found in the scene after several draws.
    """
    path, scene = scenes.get(be.scene, be.scene_seed, be.unit)
    group = TaskId(be.element, be.operation, "direct", be.scene, be.index).group_id
    problems = []
    for attempt in range(6):
        rng = np.random.default_rng([seed, _stable(group), attempt])
        try:
            edit = _recipe(scene, be, rng)
            m0, gt = write_edit_models(edit, path, out, group, seed)
            facts = verify_edit(edit, scene, m0, gt)
        except NoCandidate as exc:
            problems.append(str(exc))
            continue
        return [BimTask(task_id=str(TaskId(be.element, be.operation, cat, be.scene, be.index)), element=be.element,
                        operation=be.operation, category=cat, scene=be.scene, instruction=edit.texts[cat],
                        input_ifc=str(m0), ground_truth_ifc=str(gt), target_guids=edit.target_guids,
                        relevant_properties=edit.relevant_properties, unit=be.unit, oracle_code=edit.code,
                        group_id=group, seed=seed, facts=facts.get(cat, {}))
                for cat in CATEGORIES]
    raise RuntimeError(f"{group}: no usable target in scene {path.name}: {'; '.join(problems)}")


def generate_tasks(n: int | None = None, seed: int = 0, out_dir: str | Path = ".", *, workers: int = 1,
                   backend: Backend = PROCESS,
                   progress: Callable[[int, int], None] | None = None) -> list[BimTask]:
    """Generate the default split (``n`` None: 324 tasks; a multiple of 324: that many rounds of it)
    or ``n`` tasks stratified across the 18 element × operation cells (`stratified_edits`).

    Writes scenes, inputs, ground truths and ``tasks.jsonl`` under ``out_dir``. The base edits
    of one scene are made in order by one worker (``workers`` processes, or Ray tasks with
    ``backend`` ray, which then need ``out_dir`` on a filesystem every node mounts); scenes
    share nothing, so the files are the same for any number of workers. ``progress(done, total)``
    is told the tasks made so far as each scene's are done.

    Raises:
        ValueError: ``n`` is not positive.
    """
    if n is not None and n < 1:
        raise ValueError(f"n must be a positive number of tasks, got {n}")
    total = 324 if n is None else n
    out = Path(out_dir)
    full = total % 324 == 0
    picks: list[str] | None = None
    if full:
        wanted = list(itertools.islice(base_edits(seed, rounds=total // 324), total // len(CATEGORIES)))
    else:
        wanted, picks = stratified_edits(seed, total)
    by_scene: dict[tuple[str, int, str], list[int]] = {}
    for k, be in enumerate(wanted):
        by_scene.setdefault((be.scene, be.scene_seed, be.unit), []).append(k)
    jobs = [([wanted[k] for k in ks], out, seed) for ks in by_scene.values()]
    groups: list[list[BimTask]] = [[] for _ in wanted]
    done = 0
    for ks, made in zip(by_scene.values(), map_ordered(_scene_groups, jobs, workers=workers, backend=backend),
                        strict=True):
        for k, group in zip(ks, made, strict=True):
            groups[k] = group
        done += len(ks) * (len(CATEGORIES) if picks is None else 1)  # a pick keeps one phrasing of three
        if progress is not None:
            progress(done, total)
    if picks is None:
        tasks = [t for group in groups for t in group]
    else:
        tasks = [next(t for t in group if t.category == cat) for group, cat in zip(groups, picks, strict=True)]
    write_tasks(tasks, out / TASKS_FILE)
    return tasks


def stratified_edits(seed: int, total: int) -> tuple[list[BaseEdit], list[str]]:
    """``total`` base edits taken in turn from the 18 (element, operation) cells, simple and
    complex scenes alternating within a cell, each with one phrasing that rotates through the
    three, so any ``--n`` samples every cell and phrasing as evenly as it can (the first 18 tasks
    cover the 18 cells). Cells run out in proportion to the paper's composition, as rounds of it
    are taken in order."""
    cells: dict[tuple[str, str], list[BaseEdit]] = {cell: [] for cell in BASE_COUNTS}
    rounds = math.ceil(total / len(BASE_COUNTS) / min(BASE_COUNTS.values())) + 1
    by_scene: dict[tuple[str, str, str], list[BaseEdit]] = {}
    for be in base_edits(seed, rounds=rounds):
        by_scene.setdefault((be.element, be.operation, be.scene), []).append(be)
    for (element, op), queue in cells.items():
        simple, complex_ = by_scene[(element, op, "simple")], by_scene[(element, op, "complex")]
        for a, b in itertools.zip_longest(simple, complex_):
            queue.extend(x for x in (a, b) if x is not None)
    wanted: list[BaseEdit] = []
    picks: list[str] = []
    depth = 0
    while len(wanted) < total:
        for queue in cells.values():
            if depth < len(queue) and len(wanted) < total:
                wanted.append(queue[depth])
                picks.append(list(CATEGORIES)[(len(wanted) - 1) // len(cells) % len(CATEGORIES)])
        depth += 1
    return wanted, picks


def _scene_groups(job: tuple[list[BaseEdit], Path, int]) -> list[list[BimTask]]:
    """The tasks of base edits that share one scene, made in order."""
    edits, out, seed = job
    scenes = _Scenes(out / "scenes")
    return [make_group(be, scenes, out, seed) for be in edits]


def generate_demo(seed: int = 0, out_dir: str | Path = ".") -> list[BimTask]:
    """The 12-task demo split: :data:`DEMO_GROUPS` on simple scenes, three phrasings each."""
    out = Path(out_dir)
    scenes = _Scenes(out / "scenes")
    wanted = list(DEMO_GROUPS)
    tasks: list[BimTask] = []
    for be in base_edits(seed):
        if be.scene == "simple" and (be.element, be.operation) in wanted:
            wanted.remove((be.element, be.operation))
            tasks.extend(make_group(be, scenes, out, seed))
    write_tasks(tasks, out / TASKS_FILE)
    return tasks


def generate_split(split: str, *, seed: int = 0, out_dir: str | Path) -> list[BimTask]:
    """Generate a named split ("default" or "demo") into ``out_dir``."""
    if split == "demo":
        return generate_demo(seed, out_dir)
    return generate_tasks(None, seed, out_dir)
