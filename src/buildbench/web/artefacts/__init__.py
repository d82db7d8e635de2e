"""What an episode built, as one JSON scene the page draws in 3-D.

Every suite's product becomes the same small vocabulary: oriented boxes, triangle meshes
and floor polygons, each with a verdict ``status`` that picks its colour, plus findings
(the verifier's messages, each naming the elements it is about) and, for simulated
machines, an animation of box centres over time. Verdicts are recomputed here by the
suite's own checker from the stored outcome (the same code that scored the episode), so
what is coloured is what was judged.

The JSON form (``format`` = :data:`FORMAT`):

* ``up``: ``"y"`` or ``"z"`` (z-up data is turned y-up by the page).
* ``boxes``: ``{id, label, center[3], size[3], rotation[9] (row-major, local → world), status}``.
* ``meshes``: ``{id, label, positions[3n], indices[3m], status}``.
* ``polygons``: ``{id, label, points [[x, y, z]…], status}`` (floors, drawn filled).
* ``animation``: ``{times[T], tracks: {box id: [x, y, z] × T flattened}}`` or None.
* ``findings``: ``{status, title, text, ids}``; ``legend``: ``{status, label, color, count}``.
* ``notes``: how the view was made and what it leaves out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from buildbench.harness.episode import Episode
from buildbench.harness.episode_outcome import OutcomeReadError
from buildbench.harness.task import Task

FORMAT = "buildbench.view.artefact/1"
#: Three numbers (metres), as a sequence or an array.
Vec3 = Sequence[float] | np.ndarray

#: Colour (CSS hex) and legend text of every status an element can have.
STATUS_STYLE: dict[str, tuple[str, str]] = {
    "pass": ("#7fb36a", "passes every test"),
    "fail": ("#e0473c", "named by a failing test"),
    "added": ("#3fa34d", "added by the edit"),
    "modified": ("#f0a030", "modified by the edit"),
    "removed": ("#e0473c", "removed by the edit (as it was before)"),
    "context": ("#b8bcc4", "unchanged"),
    "collision": ("#e0473c", "collides with another object"),
    "out_of_bounds": ("#b04be0", "out of bounds"),
    "both": ("#8b1a1a", "collides and is out of bounds"),
    "ok": ("#a9b6c6", "no problem found"),
    "violates": ("#e0473c", "named by a constraint judged violated"),
    "holds": ("#2f7fd8", "named only by constraints judged to hold"),
    "block": ("#c8a165", "block"),
    "broken": ("#e0473c", "block at a joint that broke"),
    "cargo": ("#5a7bd8", "cargo"),
    "terrain": ("#8a8f98", "terrain"),
    "floor": ("#d9d4c7", "floor"),
    "wall": ("#e8e6e1", "wall"),
    "opening": ("#9ac7e8", "door or window"),
}


@dataclass
class Artefact:
    """An artefact scene under construction (see the module docstring for the JSON form)."""

    kind: str
    up: str = "y"
    boxes: list[dict[str, Any]] = field(default_factory=list)
    meshes: list[dict[str, Any]] = field(default_factory=list)
    polygons: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    animation: dict[str, Any] | None = None
    summary: str = ""

    def box(self, box_id: str, label: str, center: Vec3, size: Vec3,
            rotation: np.ndarray | None = None, status: str = "ok") -> None:
        """Add an oriented box: centre and full size in metres, rotation local → world."""
        rot = np.eye(3) if rotation is None else np.asarray(rotation, dtype=np.float64).reshape(3, 3)
        self.boxes.append({"id": box_id, "label": label, "center": _floats(center), "size": _floats(size),
                           "rotation": _floats(rot.reshape(9)), "status": status})

    def mesh(self, mesh_id: str, label: str, vertices: np.ndarray, faces: np.ndarray, status: str) -> None:
        """Add a triangle mesh (vertices ``(n, 3)`` metres, faces ``(m, 3)`` indices)."""
        self.meshes.append({"id": mesh_id, "label": label, "positions": _floats(np.asarray(vertices).reshape(-1)),
                            "indices": [int(i) for i in np.asarray(faces).reshape(-1)], "status": status})

    def polygon(self, polygon_id: str, label: str, points: Sequence[Vec3], status: str = "floor") -> None:
        """Add a filled horizontal polygon (``[x, y, z]`` points, metres)."""
        self.polygons.append({"id": polygon_id, "label": label, "points": [_floats(p) for p in points],
                              "status": status})

    def finding(self, status: str, title: str, text: str, ids: Sequence[str] = ()) -> None:
        """Add a verifier message naming the element ids it is about."""
        self.findings.append({"status": status, "title": title, "text": text, "ids": list(ids)})

    def to_json(self) -> dict[str, Any]:
        counts = Counter(item["status"] for group in (self.boxes, self.meshes, self.polygons) for item in group)
        legend = [{"status": s, "label": STATUS_STYLE.get(s, ("", s))[1], "color": STATUS_STYLE.get(s, ("#999", ""))[0],
                   "count": n} for s, n in sorted(counts.items())]
        return {"format": FORMAT, "kind": self.kind, "up": self.up, "summary": self.summary,
                "boxes": self.boxes, "meshes": self.meshes, "polygons": self.polygons,
                "animation": self.animation, "findings": self.findings, "legend": legend,
                "colors": {s: c for s, (c, _) in STATUS_STYLE.items()}, "notes": self.notes}


def no_outcome(art: Artefact, episode: Episode) -> Artefact:
    """``art`` saying that ``episode`` stored no outcome (its env never gave one) and how it ended,
    so an empty view is never mistaken for an empty product."""
    how = f"status {episode.status}" + (f": {episode.error[:300]}" if episode.error else "")
    art.summary = f"no outcome ({how})"
    art.notes.append(f"the episode stored no outcome ({how}): what it built is not known")
    return art


def _floats(values: Any) -> list[float]:
    # Rounded to 0.1 mm: enough to draw, and keeps a 600-member frame's JSON small.
    return [round(float(v), 4) + 0.0 for v in np.asarray(values, dtype=np.float64).reshape(-1)]


#: Loads the task an episode ran (None when the run's tasks cannot be loaded here).
TaskLookup = Callable[[str], Task | None]
Builder = Callable[[Episode, "ArtefactContext"], Artefact]


@dataclass(frozen=True)
class ArtefactContext:
    """What a builder may use besides the episode: the run folder, a task lookup and the
    run's ``-o`` options (e.g. ``geometry``, how the rooms draw their objects)."""

    run_dir: Any
    task: TaskLookup
    options: Mapping[str, Any] = field(default_factory=dict)


#: Builder of each suite's view, as ``module:function`` in this package, imported on first
#: use (each builder pulls in its suite: simulator, IFC kernel, scene checks).
BUILDERS: dict[str, str] = {
    "dreamhouse": "dreamhouse:frame_artefact",
    "buildarena": "buildarena:machine_artefact",
    "bimedit": "bimedit:edit_artefact",
    "scenerevis": "rooms:room_artefact",
    "legoeval": "rooms:house_artefact",
    "example": "rooms:tower_artefact",
}


def _builder(suite: str) -> Builder | None:
    import importlib

    target = BUILDERS.get(suite)
    if target is None:
        return None
    module, _, name = target.partition(":")
    builder: Builder = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    return builder


def build_artefact(suite: str, episode: Episode, context: ArtefactContext) -> dict[str, Any]:
    """The artefact JSON of ``episode``; a suite without a view, or an outcome that cannot be
    drawn, gives an empty scene whose notes say why (never an exception)."""
    if suite not in BUILDERS:
        art = Artefact("none")
        art.notes.append(f"suite {suite!r} has no 3-D view")
        return art.to_json()
    try:
        builder = _builder(suite)
        assert builder is not None
        return builder(episode, context).to_json()
    except OutcomeReadError as exc:
        art = Artefact("none")
        art.summary = "the stored outcome cannot be read"
        art.notes.append(str(exc.in_run(context.run_dir))[:500])
        return art.to_json()
    except Exception as exc:  # a damaged or foreign outcome must not take the page down
        art = Artefact("none")
        art.notes.append(f"the artefact could not be drawn: {type(exc).__name__}: {str(exc)[:300]}")
        return art.to_json()
