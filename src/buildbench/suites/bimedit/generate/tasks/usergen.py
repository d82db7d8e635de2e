"""Tasks on a user's own IFC model, and the ``real`` split on a folder of real buildings.

:func:`generate_from_ifc` lays the paper's composition (:data:`.split.BASE_COUNTS`, 54 base
edits a round, three phrasings each) over one model of any schema and length unit, as
many rounds as the requested number of tasks needs; the model is copied into the task
folder, so the folder is self-contained. A base edit the model cannot support (no column
to move, no wall a description can single out…) is skipped and reported with the reason;
further rounds fill the gap when the model has other elements to edit.

:func:`generate_real` is the default split with its complex half on real buildings: the
simple base edits run on synthetic scenes as in :func:`.split.generate_tasks`, each complex
base edit on the next building (in name order) that supports it. The buildings come from
a folder the caller names (``BUILDBENCH_IFC_DIR`` for :func:`.tasks.load_tasks`); the
product never reads the project's shared data by itself.
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from buildbench.harness.errors import ConfigError
from buildbench.suites.bimedit.check.model import NO_LENGTH_UNIT, ModelError, load_model
from buildbench.suites.bimedit.check.schemas import IFC_SUFFIXES, copy_readable, readable_name
from buildbench.suites.bimedit.check.shapes import ShapeCache
from buildbench.suites.bimedit.generate.describe import DescriptionIndex
from buildbench.suites.bimedit.generate.tasks import anycreates, anymodel, recipes
from buildbench.suites.bimedit.generate.tasks.recipes import Edit, NoCandidate, Scene
from buildbench.suites.bimedit.generate.tasks.split import (
    BASE_COUNTS,
    _Scenes,
    _stable,
    base_edits,
    make_group,
    verify_edit,
    write_edit_models,
)
from buildbench.suites.bimedit.recycle import in_child
from buildbench.suites.bimedit.task_records import (
    CATEGORIES,
    IFC_CLASSES,
    TASKS_FILE,
    UNITS,
    BimTask,
    TaskId,
    write_tasks,
)

#: Draws per base edit before it is reported as impossible on a model.
ATTEMPTS = 6
#: Base edits (three tasks each) made in one child process of :func:`generate_from_ifc`: what
#: IfcOpenShell keeps of the models they open (~25 MB a base edit on the Duplex building) is freed
#: when the child ends. What a child's description index computes comes back with its answer
#: (:func:`_keep`), so later children do not tessellate it again.
GROUPS_PER_CHILD = 6
#: The report written beside ``tasks.jsonl`` (text: a folder of tasks holds no other JSON file).
REPORT_FILE = "generation-report.txt"


@dataclass(frozen=True)
class Skipped:
    """A base edit that could not be made: its design slot and why."""

    element: str
    operation: str
    model: str
    reason: str


@dataclass
class GenerationReport:
    """What a generation made and what it could not.

    Attributes:
        models: per model file name, its schema, unit and element counts.
        requested: the number of tasks asked for.
        made: tasks written.
        per_cell: tasks made per "element/operation".
        skipped: base edits that could not be made, with reasons.
        unreadable: model files that could not be read, with the reason.
        seconds: wall time of the generation.
    """

    models: dict[str, dict[str, object]] = field(default_factory=dict)
    requested: int = 0
    made: int = 0
    per_cell: dict[str, int] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return asdict(self)

    def lines(self) -> list[str]:
        """A short human-readable account: one line per model, per shortfall reason and per unreadable file."""
        out = []
        for name, info in self.models.items():
            counts = ", ".join(f"{k} {v}" for k, v in dict(info["elements"]).items() if v)  # type: ignore[call-overload]
            out.append(f"model {name}: {info['schema']}, unit {info['unit']}; {counts or 'no editable elements'}")
            if info.get("unnamable"):
                out.append(f"model {name}: {info['unnamable']} {UNNAMABLE}")
            if info.get("no_length_unit"):
                out.append(f"model {name}: {NO_LENGTH_UNIT}")
        for name, why in self.unreadable.items():
            out.append(f"skipped model {name}: {why}")
        grouped = Counter((s.element, s.operation, _short(s.reason)) for s in self.skipped)
        for (element, op, why), k in sorted(grouped.items()):
            out.append(f"could not make {k} {element} {op} edit(s): {why}")
        out.append(f"made {self.made} of {self.requested} requested tasks in {self.seconds:.1f} s")
        return out


#: Why elements of a model were left out of every task (after their count).
UNNAMABLE = ("elements left out: their GlobalIds are missing, repeat or are not the 22 characters IfcOpenShell "
             "looks elements up by")


def _short(reason: str) -> str:
    return reason.split("; ")[-1][:160]


def unit_name(scale_m: float, where: str) -> str:
    """The name of a length unit from metres per unit.

    Raises:
        ConfigError: a unit none of :data:`UNITS` matches.
    """
    for name, s in UNITS.items():
        if math.isclose(scale_m, s, rel_tol=1e-6):
            return name
    raise ConfigError(f"{where}: unsupported length unit ({scale_m:g} m per unit); supported: {', '.join(UNITS)}")


def open_scene(path: Path) -> Scene:
    """A model with its description index, ready for the recipes.

    Raises:
        ConfigError: the file cannot be read as IFC, its unit is not supported, or an entity has
            no GlobalId.
    """
    try:
        model = load_model(path)
    except ModelError as exc:
        raise ConfigError(" ".join(str(exc).split())) from None  # one line, whatever the parser said
    unit_name(model.unit_scale_m, str(path))
    # IFC requires a GlobalId on every product; edits, checks and oracle code all name
    # elements by it, so a model that leaves one out cannot be edited reliably.
    anonymous = [e for e in model.file.by_type("IfcProduct") if not e.GlobalId]
    if anonymous:
        raise ConfigError(f"{path}: #{anonymous[0].id()} ({anonymous[0].is_a()}) has no GlobalId, which IFC "
                          f"requires ({len(anonymous)} such entities)")
    return Scene(model.file, DescriptionIndex(model, ShapeCache(model)), model.unit_scale_m)


def any_recipe(scene: Scene, element: str, operation: str, variant: int, rng: np.random.Generator) -> Edit:
    """The base edit (element, operation, variant) on any model (see :mod:`.anymodel`)."""
    cls = IFC_CLASSES[element]
    if not scene.model.by_type(_needs(element, operation)):
        raise NoCandidate(f"the model has no {_needs(element, operation)}")
    if operation == "delete":
        return recipes.delete_any(scene, cls, rng)
    if operation == "update":
        return anymodel.update_any(scene, cls, variant, rng)
    if element == "column":
        return anycreates.create_column(scene, rng)
    if element == "wall":
        return anycreates.recreate_wall(scene, rng)
    if element in ("slab", "space"):
        return anycreates.recreate_extrusion(scene, cls, rng)
    return anycreates.recreate_filling(scene, cls, rng)


def _needs(element: str, operation: str) -> str:
    """The class a base edit needs in the model (a new column needs only a room or a wall)."""
    return "IfcProduct" if (element, operation) == ("column", "create") else IFC_CLASSES[element]


@dataclass(frozen=True)
class Slot:
    """A base edit to make on a given model file."""

    element: str
    operation: str
    scene: str
    index: int
    variant: int


@dataclass
class Used:
    """What earlier tasks of one generation took: oracle codes, and targets per (element, operation).

    ``taken`` lists every take in order, so a child process's takes can be replayed here (:meth:`add`).
    """

    codes: set[str] = field(default_factory=set)
    targets: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    taken: list[tuple[tuple[str, str], str, str | None]] = field(default_factory=list)

    def avoid(self, slot: Slot) -> set[str]:
        """Targets a delete or create of this kind must not take again (updates may: other variants)."""
        if slot.operation == "update":
            return set()
        return set(self.targets.get((slot.element, slot.operation), set()))

    def take(self, slot: Slot, edit: Edit) -> None:
        self.add((slot.element, slot.operation), edit.code,
                 edit.origin or (edit.target_guids[0] if edit.target_guids else None))

    def add(self, cell: tuple[str, str], code: str, target: str | None) -> None:
        self.taken.append((cell, code, target))
        self.codes.add(code)
        if target is not None:
            self.targets.setdefault(cell, set()).add(target)


def make_on_model(slot: Slot, scene: Scene, path: Path, out: Path, seed: int, used: Used) -> list[BimTask]:
    """One base edit's M0, M* and three tasks on the model at ``path`` (its ``scene``).

    Raises:
        NoCandidate: no draw gave a new, verified edit; the message holds each draw's reason.
    """
    group = TaskId(slot.element, slot.operation, "direct", slot.scene, slot.index).group_id
    problems: list[str] = []
    for attempt in range(ATTEMPTS):
        rng = np.random.default_rng([seed, _stable(group + path.name), attempt])
        scene.avoid = used.avoid(slot)
        try:
            needed = {e.GlobalId for e in scene.model.by_type(_needs(slot.element, slot.operation))}
            if slot.operation != "update" and needed <= scene.avoid:
                raise NoCandidate(f"each {_needs(slot.element, slot.operation)} of the model is already the target "
                                  f"of an earlier {slot.element} {slot.operation} task")
            edit = any_recipe(scene, slot.element, slot.operation, slot.variant, rng)
            if edit.code in used.codes:
                raise NoCandidate("every candidate gives an edit an earlier task already has")
            m0, gt = write_edit_models(edit, path, out, group, seed)
            facts = verify_edit(edit, scene, m0, gt)
        except (NoCandidate, RuntimeError) as exc:  # RuntimeError: the oracle code failed on this model
            problems.append(str(exc))
            continue
        finally:
            scene.avoid = set()
        used.take(slot, edit)
        unit = unit_name(scene.scale, path.name)
        return [BimTask(task_id=str(TaskId(slot.element, slot.operation, cat, slot.scene, slot.index)),
                        element=slot.element, operation=slot.operation, category=cat, scene=slot.scene,
                        instruction=edit.texts[cat], input_ifc=str(m0), ground_truth_ifc=str(gt),
                        target_guids=edit.target_guids, relevant_properties=edit.relevant_properties, unit=unit,
                        oracle_code=edit.code, group_id=group, seed=seed, facts=facts.get(cat, {}))
                for cat in CATEGORIES]
    raise NoCandidate("; ".join(dict.fromkeys(problems)))


def interleaved(round_index: int) -> list[tuple[str, str, int]]:
    """One round of the composition as (element, operation, variant), the k-th base edit of every
    cell before any (k+1)-th, so a task count below the full design keeps the mix of cells."""
    most = max(BASE_COUNTS.values())
    return [(element, op, round_index * count + k) for k in range(most)
            for (element, op), count in BASE_COUNTS.items() if k < count]


def _describe_model(scene: Scene) -> dict[str, object]:
    unnamable = scene.index.unnamable_ids
    return {"schema": scene.model.schema, "unit": unit_name(scene.scale, "model"),
            "elements": {e: len(scene.model.by_type(c)) for e, c in IFC_CLASSES.items()},
            "unnamable": sum(p.GlobalId in unnamable for p in scene.model.by_type("IfcProduct")),
            "no_length_unit": NO_LENGTH_UNIT in scene.index.model.notes}


def generate_from_ifc(ifc: str | Path, out_dir: str | Path, n: int | None = None, seed: int = 0,
                      progress: Callable[[int, int], None] | None = None) -> tuple[list[BimTask], GenerationReport]:
    """Tasks on one user model: the paper's composition (two rounds, up to 324 tasks, when ``n`` is
    None) or ``n`` tasks, taking further rounds where the model cannot support some base edits.

    Writes ``scenes/`` (a copy of the model), ``inputs/``, ``truth/``, ``tasks.jsonl`` and
    :data:`REPORT_FILE` under ``out_dir``. All tasks are complex-scene ("R") tasks.

    Raises:
        ConfigError: the model cannot be read, its unit is not supported, or no task could be made.
        ValueError: ``n`` is not positive.
    """
    if n is not None and n < 1:
        raise ValueError(f"n must be a positive number of tasks, got {n}")
    started = time.perf_counter()
    src = Path(ifc)
    scene = open_scene(src)
    out = Path(out_dir)
    (out / "scenes").mkdir(parents=True, exist_ok=True)
    path = out / "scenes" / readable_name(src.name)
    if src.resolve() != path.resolve():
        copy_readable(src, path)
    total = 324 if n is None else n
    report = GenerationReport(models={src.name: _describe_model(scene)}, requested=total)
    tasks: list[BimTask] = []
    made: Counter[tuple[str, str]] = Counter()
    used = Used()
    # the design is two rounds of the composition (324 tasks); a requested size may take more
    # rounds to make up for edits the model cannot support, until a round adds nothing
    max_rounds = 2 if n is None else math.ceil(total / 162) + 4
    rounds_done = 0
    while len(tasks) < total and rounds_done < max_rounds:
        before = len(tasks)
        todo = interleaved(rounds_done)
        for start in range(0, len(todo), GROUPS_PER_CHILD):
            if len(tasks) >= total:
                break
            # each batch in a child process: IfcOpenShell keeps memory of every model opened
            # for an edit, which goes back only when the process ends
            batch, caches = in_child(_make_batch, todo[start:start + GROUPS_PER_CHILD], scene, path, src.name,
                                     out, seed, used, made, total - len(tasks))
            _keep(scene, caches)
            for slot, group, skipped, taken in batch:
                if skipped is not None:
                    report.skipped.append(skipped)
                    continue
                used.add(*taken)
                made[(slot.element, slot.operation)] += 1
                tasks.extend(group)
            if progress is not None and len(tasks) > before:  # three phrasings may overshoot a requested count
                progress(min(len(tasks), total), total)
        rounds_done += 1
        if len(tasks) == before:  # a whole round added nothing: the model offers no more edits
            break
    tasks = tasks[:total]
    if not tasks:
        reasons = "; ".join(dict.fromkeys(_short(s.reason) for s in report.skipped))
        unnamable = report.models[src.name]["unnamable"]
        if unnamable:
            reasons += f"; {unnamable} {UNNAMABLE}"
        raise ConfigError(f"{src}: no task could be made ({reasons})")
    return tasks, _finish(tasks, report, out, started)


_Outcome = tuple[Slot, list[BimTask], "Skipped | None", tuple[tuple[str, str], str, "str | None"]]
#: The scene's description index caches (facts per class, plan segments, boxes) and meshes, by name.
_Caches = dict[str, dict[Any, Any]]


def _caches(scene: Scene) -> _Caches:
    """The scene's caches a batch fills: what its description index computed and tessellated. A
    child hands back what it added (:func:`_keep`), so the next child starts with it: each element
    of the model is tessellated once per generation, not once per batch (the same values: the
    model is only read)."""
    index = scene.index
    found = {name: getattr(index, name, None) for name in ("_by_class", "_segments", "_boxes", "_outer")}
    found["meshes"] = index.shapes._meshes
    return {name: cache for name, cache in found.items() if isinstance(cache, dict)}


def _keep(scene: Scene, added: _Caches) -> None:
    """Put what a child's batch added to the scene's caches into this process's (a batch run here,
    without fork, filled them already)."""
    for name, cache in _caches(scene).items():
        for key, value in added.get(name, {}).items():
            cache.setdefault(key, value)


def _make_batch(todo: Sequence[tuple[str, str, int]], scene: Scene, path: Path, name: str, out: Path, seed: int,
                used: Used, made: Counter[tuple[str, str]], room: int) -> tuple[list[_Outcome], _Caches]:
    """Make base edits of ``todo`` in order until ``room`` tasks are made; per base edit its slot, its
    tasks and what it took (for :meth:`Used.add`), or why it was skipped. ``used`` is updated as
    it goes (later base edits of the batch avoid what earlier ones took); ``made`` is not. With
    them, what the batch added to the scene's caches (see :func:`_caches`)."""
    had = {name: set(cache) for name, cache in _caches(scene).items()}
    made = Counter(made)
    outcomes: list[_Outcome] = []
    count = 0
    for element, op, variant in todo:
        if count >= room:
            break
        slot = Slot(element, op, "complex", made[(element, op)] + 1, variant)
        try:
            if not scene.model.by_type(_needs(element, op)):
                raise NoCandidate(f"the model has no {_needs(element, op)}")
            group = make_on_model(slot, scene, path, out, seed, used)
        except NoCandidate as exc:
            outcomes.append((slot, [], Skipped(element, op, name, str(exc)), ((element, op), "", None)))
            continue
        made[(element, op)] += 1
        count += len(group)
        outcomes.append((slot, group, None, used.taken[-1]))
    added = {name: {k: v for k, v in cache.items() if k not in had.get(name, ())}
             for name, cache in _caches(scene).items()}
    return outcomes, added


def _finish(tasks: list[BimTask], report: GenerationReport, out: Path, started: float) -> GenerationReport:
    write_tasks(tasks, out / TASKS_FILE)
    report.made = len(tasks)
    report.per_cell = dict(sorted(Counter(f"{t.element}/{t.operation}" for t in tasks).items()))
    report.seconds = round(time.perf_counter() - started, 1)
    (out / REPORT_FILE).write_text("\n".join(report.lines()) + "\n")
    return report


def ifc_files(folder: str | Path) -> list[Path]:
    """The ``.ifc`` and ``.ifczip`` files under ``folder`` (recursively), in path order.

    Raises:
        ConfigError: the folder does not exist or holds no such file.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ConfigError(f"IFC folder {root} does not exist")
    files = sorted(p for p in root.rglob("*") if p.suffix.lower() in IFC_SUFFIXES and p.is_file())
    if not files:
        raise ConfigError(f"IFC folder {root} holds no .ifc file")
    return files


def unique_names(files: Sequence[Path]) -> dict[Path, str]:
    """Each file's copy name (:func:`readable_name`), or where one name occurs in several folders
    (or as ``x.ifc`` and ``x.ifczip``), its path below their common folder joined by "_"
    (buildings from different projects are often all "model.ifc")."""
    counts = Counter(readable_name(p.name) for p in files)
    root = Path(os.path.commonpath(files)) if len(files) > 1 else Path()

    def joined(p: Path) -> str:
        flat = "_".join(p.relative_to(root).parts)
        return flat if p.suffix.lower() == ".ifc" else f"{Path(flat).stem}_{p.suffix.lower()[1:]}.ifc"

    return {p: readable_name(p.name) if counts[readable_name(p.name)] == 1 else joined(p) for p in files}


def _readable(files: Sequence[Path], report: GenerationReport) -> list[tuple[Path, str, Scene]]:
    out = []
    names = unique_names(files)
    for p in files:
        try:
            scene = open_scene(p)
        except ConfigError as exc:
            report.unreadable[names[p]] = str(exc).split(": ", 1)[-1]
            continue
        report.models[names[p]] = _describe_model(scene)
        out.append((p, names[p], scene))
    return out


def generate_real(ifc_dir: str | Path, out_dir: str | Path, seed: int = 0,
                  progress: Callable[[int, int], None] | None = None) -> tuple[list[BimTask], GenerationReport]:
    """The ``real`` split: the default composition with real buildings as its complex scenes.

    Unreadable files in the folder are skipped and reported; complex base edits no building
    supports are reported too.

    Raises:
        ConfigError: the folder has no readable IFC file.
    """
    started = time.perf_counter()
    out = Path(out_dir)
    report = GenerationReport(requested=324)
    buildings = _readable(ifc_files(ifc_dir), report)
    if not buildings:
        raise ConfigError(f"IFC folder {ifc_dir}: no readable IFC file ({'; '.join(report.unreadable.values())})")
    copies = []
    for p, name, scene in buildings:
        dest = out / "scenes" / "real" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        copy_readable(p, dest)
        copies.append((dest, scene))
    synthetic = _Scenes(out / "scenes")
    tasks: list[BimTask] = []
    used = Used()
    for be in base_edits(seed):
        if be.scene == "simple":
            tasks.extend(make_group(be, synthetic, out, seed))
        else:
            slot = Slot(be.element, be.operation, "complex", be.index, be.variant)
            tasks.extend(_on_some_building(slot, copies, out, seed, used, report))
        if progress is not None:
            progress(len(tasks), 324)
    return tasks, _finish(tasks, report, out, started)


def _on_some_building(slot: Slot, buildings: list[tuple[Path, Scene]], out: Path, seed: int, used: Used,
                      report: GenerationReport) -> list[BimTask]:
    """The slot on the first building, from a rotating start, that supports it (none: reported, empty)."""
    start = _stable(f"{slot.element}/{slot.operation}/{slot.index}") % len(buildings)
    reasons = []
    for k in range(len(buildings)):
        path, scene = buildings[(start + k) % len(buildings)]
        if not scene.model.by_type(_needs(slot.element, slot.operation)):
            continue
        try:
            return make_on_model(slot, scene, path, out, seed, used)
        except NoCandidate as exc:
            reasons.append(f"{path.name}: {_short(str(exc))}")
    report.skipped.append(Skipped(slot.element, slot.operation, "*",
                                  "; ".join(reasons) or f"no building has a {_needs(slot.element, slot.operation)}"))
    return []

