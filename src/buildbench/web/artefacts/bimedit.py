"""BIM-Edit: the committed IFC model with the elements the edit changed highlighted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from buildbench.harness.episode import Episode
from buildbench.harness.episode_outcome import episode_outcome

from . import Artefact, ArtefactContext

#: Unchanged elements drawn as meshes at most; beyond this they are left out (a note says so).
MAX_CONTEXT_ELEMENTS = 1500
#: Only building elements are drawn (not spaces, storeys or the site, which would hide the rest).
_SKIPPED_CLASSES = ("IfcSpace", "IfcSite", "IfcBuilding", "IfcBuildingStorey", "IfcProject", "IfcOpeningElement",
                    "IfcAnnotation", "IfcGrid", "IfcVirtualElement")


def committed_model(episode: Episode, run_dir: Path) -> Path | None:
    """The committed IFC inside the run folder (the outcome's path if it still lies there,
    else ``committed.ifc`` in the episode's artifact folder), or None (also for a file with
    more than one hard link)."""
    from buildbench.suites.bimedit.outcome import BimEditOutcome

    root = Path(run_dir).resolve()
    candidates: list[Path] = []
    outcome = episode_outcome(episode, BimEditOutcome)
    if outcome is not None and outcome.model_path:
        candidates.append(Path(outcome.model_path))
    folder = episode.artifacts.get("dir")
    if folder:
        candidates.append(root / str(folder) / "committed.ifc")
    for path in candidates:
        resolved = (root / path).resolve() if not path.is_absolute() else path.resolve()
        # As for images: a hard link made inside the run folder may name any file on the disk.
        if resolved.is_relative_to(root) and resolved.is_file() and resolved.stat().st_nlink == 1:
            return resolved
    return None


def edit_artefact(episode: Episode, context: ArtefactContext) -> Artefact:
    """Elements added (green), modified (orange), removed (red, as they were) and unchanged
    (grey), each as its tessellated IFC body in world metres (z up).

    The diff is the suite's own (``check.diff.node_changes``) from the task's input model
    to the model the agent committed.
    """
    from buildbench.suites.bimedit.check.diff import node_changes
    from buildbench.suites.bimedit.check.model import load_model
    from buildbench.suites.bimedit.check.shapes import ShapeCache

    art = Artefact("ifc", up="z")
    committed = committed_model(episode, Path(context.run_dir))
    if not episode.outcome:  # what it committed before it ended may still be in its artifact folder
        art.notes.append(f"the episode stored no outcome (status {episode.status})"
                         + ("; drawn: the last model it committed" if committed is not None else ""))
    if committed is None:
        art.notes.append("the episode committed no model (nothing to draw)")
        return art
    task = context.task(episode.task_id)
    base_path = task.inputs.get("ifc_path") if task is not None else None
    if not base_path or not Path(str(base_path)).is_file():
        art.notes.append("the task's input model is not available here: the edit cannot be diffed")
        return art
    before, after = load_model(str(base_path)), load_model(committed)
    changes = node_changes(before, after)
    # the committed model is the agent's: its tessellations get the scorer's budget, not the viewer's patience
    shapes_after, shapes_before = ShapeCache(after, bounded=True), ShapeCache(before)
    status_of = {k: "added" for k in changes.added} | {k: "modified" for k in changes.modified}
    drawable = [k for k, n in after.nodes.items() if not n.ifc_class.startswith(_SKIPPED_CLASSES)]
    context_keys = [k for k in drawable if k not in status_of]
    if len(context_keys) > MAX_CONTEXT_ELEMENTS:
        art.notes.append(f"{len(context_keys)} unchanged elements: only the first {MAX_CONTEXT_ELEMENTS} are drawn")
        context_keys = context_keys[:MAX_CONTEXT_ELEMENTS]
    for key in [k for k in drawable if k in status_of] + context_keys:
        _add_element(art, after, shapes_after, key, status_of.get(key, "context"))
    for key in sorted(changes.removed):
        _add_element(art, before, shapes_before, key, "removed")
    for status, keys, model in (("added", changes.added, after), ("modified", changes.modified, after),
                                ("removed", changes.removed, before)):
        if keys:
            names = [_name(model, k) for k in sorted(keys)]
            art.finding(status, f"{len(keys)} element(s) {status}", "\n".join(names[:60]), sorted(keys))
    edges_added, edges_removed = after.edges - before.edges, before.edges - after.edges
    if edges_added or edges_removed:
        lines = [f"+ {' '.join(map(str, e))}" for e in sorted(edges_added)][:30]
        lines += [f"- {' '.join(map(str, e))}" for e in sorted(edges_removed)][:30]
        art.finding("modified", f"relations: {len(edges_added)} added, {len(edges_removed)} removed", "\n".join(lines))
    art.summary = (f"edit diff: {len(changes.added)} added, {len(changes.modified)} modified, "
                   f"{len(changes.removed)} removed; {len(art.meshes) + len(art.boxes)} elements drawn")
    art.notes += ["diff computed by the suite's checker from the task's input model to the committed model",
                  "elements are drawn as their tessellated IFC bodies; an element without a body is "
                  "drawn as a 0.2 m marker at its placement"]
    art.notes += shapes_after.notes[:10] + shapes_before.notes[:10]
    return art


def _name(model: Any, key: str) -> str:
    node = model.nodes[key]
    name = getattr(node.entity, "Name", None)
    return f"{node.ifc_class} {key}" + (f" ({name})" if name else "")


def _add_element(art: Artefact, model: Any, shapes: Any, key: str, status: str) -> None:
    from buildbench.suites.bimedit.check.bounded import KernelCrash, TessellationOverrun

    label = _name(model, key)
    try:
        mesh = shapes.mesh(key)
    except (TessellationOverrun, KernelCrash) as exc:
        note = f"not tessellated, drawn as markers: {exc}"
        if note not in art.notes:
            art.notes.append(note)
        mesh = None
    if mesh is None:
        art.box(key, label, model.world_matrix(key)[:3, 3], (0.2, 0.2, 0.2), None, status)
        return
    art.mesh(key, label, np.asarray(mesh.vertices), np.asarray(mesh.faces), status)
