"""Tessellate IFC products into world-space triangle meshes (metres), on demand and cached.

Only the few elements of an edit set are ever tessellated: tessellating every product
of three ~600-element files is what made the minimal implementation take ~15 s per
task (spec section 10). Hosts are tessellated with their openings subtracted, as
``ifcopenshell.geom`` does by default (spec section 3.2).
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from typing import Any

import ifcopenshell
import ifcopenshell.geom
import numpy as np
import shapely
from scipy.spatial import ConvexHull, QhullError

from buildbench.geometry import Boxes, TriangleMesh
from buildbench.limits import limit
from buildbench.suites.bimedit.check.bounded import Arrays, Budget, run_bounded
from buildbench.suites.bimedit.check.caps import _below as below
from buildbench.suites.bimedit.check.model import IfcModel

_REF = re.compile(r"#(\d+)")
_SETTINGS = ifcopenshell.geom.settings()
_SETTINGS.set("use-world-coords", True)


#: A tessellation: the mesh (None without triangles or on failure) and the kernel's error, if any.
Tessellation = tuple[TriangleMesh | None, str | None]


class MeshStore:
    """Tessellations shared by the :class:`ShapeCache` of several models, keyed by exact content.

    A task's M* and M' often hold the same element with the same geometry: the edited element
    of a prediction that got it right, every untouched element. The key is every statement the
    geometry kernel reads for the element (its own, those it references, its openings' and
    theirs, as ifcopenshell prints them: ids and shortest round-trip reals; owner histories
    left out) plus the file's
    schema and length unit, so the same key means the same kernel input and so the same mesh.
    Files whose entities were renumbered simply share nothing.

    Args:
        size: Tessellations kept (least recently used dropped first).
    """

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._items: OrderedDict[str, Tessellation] = OrderedDict()

    def get(self, key: str) -> Tessellation | None:
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
        return found

    def put(self, key: str, value: Tessellation) -> None:
        self._items[key] = value
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def clear(self) -> None:
        self._items.clear()


#: Who last changed an element and with what: an edit rewrites these timestamps, the geometry
#: kernel never reads them (references to them stay in the key, by id).
_NOT_READ_BY_KERNEL = frozenset({"IfcOwnerHistory", "IfcPersonAndOrganization", "IfcPerson", "IfcOrganization",
                                 "IfcApplication", "IfcActorRole", "IfcPostalAddress", "IfcTelecomAddress"})


def kernel_input(model: IfcModel, ent: ifcopenshell.entity_instance) -> tuple[str, int]:
    """Every statement the geometry kernel reads to tessellate ``ent`` (see :class:`MeshStore`),
    sorted, after the schema and length unit; and its weight for :data:`FORK_FROM_PARENTHESES`."""
    f = model.file
    closure: dict[int, ifcopenshell.entity_instance] = {}
    roots = (ent, *(getattr(ent, "HasOpenings", None) or ()))
    for root in roots:
        for e in f.traverse(root):
            if e.is_a() not in _NOT_READ_BY_KERNEL:
                closure[e.id()] = e
    statements = {i: str(e) for i, e in closure.items()}
    text = "\n".join(sorted(statements.values()))
    return f"{f.schema_identifier}|{model.unit_scale_m!r}\n{text}", _weight(statements, [r.id() for r in roots])


def _weight(statements: dict[int, str], roots: list[int]) -> int:
    """Parentheses (one per point, index tuple, loop, face...) of the statements reachable from
    ``roots``, a statement counted once per path that reaches it, as the kernel evaluates an item
    once per use (an item listed 2,000 times, a map used in 2,000 mapped items); stops counting
    just past :data:`FORK_FROM_PARENTHESES`."""
    # after the "#id=" (an inline value, id 0, has none)
    refs = {i: [int(r) for r in _REF.findall(text, text.find("=") + 1)] for i, text in statements.items()}
    own = {i: text.count("(") for i, text in statements.items()}
    reach: dict[int, int] = {}
    return sum(below(root, refs, own, reach, FORK_FROM_PARENTHESES) for root in roots)


def content_key(text: str) -> str:
    """The key of :func:`kernel_input`'s ``text`` in a :class:`MeshStore`."""
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


#: Parentheses of kernel input, counted once per use (:func:`_weight`), from which an agent
#: model's element is tessellated in a forked child (:mod:`.bounded`); smaller ones in this
#: process, where the slowest input found this size (a swept disk along 1,000 points) takes 8 s,
#: 1,000 repeated triangles 0.5 s, and a fork (~40 ms beside three parsed real models) would cost
#: more than most real elements' tessellation.
FORK_FROM_PARENTHESES = 1_000


class ShapeCache:
    """Meshes of one model's nodes, computed on first use.

    ``ifcopenshell.geom`` returns coordinates in metres whatever the model's unit, so
    everything here is in metres and unit-invariant.

    Args:
        model: The parsed model.
        store: Tessellations shared with other models' caches (see :class:`MeshStore`).
        bounded: The model is untrusted (an agent's): all its tessellations together get
            ``ifc_tessellation_seconds`` CPU seconds, a large one in a forked child
            (:mod:`.bounded`; past them :class:`~.bounded.TessellationOverrun` is raised). A
            trusted model (a task's own) is tessellated here, unbounded: forking its large elements
            added ~10% to the real-model scoring benchmark.
    """

    def __init__(self, model: IfcModel, store: MeshStore | None = None, *, bounded: bool = False) -> None:
        self.model = model
        self.store = store
        self.bounded = bounded
        self._meshes: dict[str, TriangleMesh | None] = {}
        self.notes: list[str] = []
        self.budget = Budget(model.path, limit("ifc_tessellation_seconds"))

    def new_budget(self) -> None:
        """A full tessellation budget, for one scoring (the cache of a task's model serves many)."""
        self.budget = Budget(self.model.path, limit("ifc_tessellation_seconds"))

    def mesh(self, key: str) -> TriangleMesh | None:
        """The node's mesh, or None if it has no body geometry or tessellation failed."""
        if key in self._meshes:
            return self._meshes[key]
        ent = self.model.nodes[key].entity
        mesh: TriangleMesh | None = None
        if getattr(ent, "Representation", None) is not None:
            text, weight = kernel_input(self.model, ent) if self.store is not None or self.bounded else ("", 0)
            if self.store is None:
                mesh, error = self._tessellate(ent, weight)
            else:
                content = content_key(text)
                found = self.store.get(content)
                if found is None:
                    found = self._tessellate(ent, weight)
                    self.store.put(content, found)
                mesh, error = found
            if error is not None:
                self.notes.append(f"{ent.is_a()} {key}: geometry could not be tessellated ({error})")
        self._meshes[key] = mesh
        return mesh

    def _tessellate(self, ent: ifcopenshell.entity_instance, size: int) -> Tessellation:
        element = f"#{ent.id()} ({ent.is_a()})"
        if not self.bounded:
            arrays, error = _kernel(ent)
        elif size >= FORK_FROM_PARENTHESES:
            arrays, error = run_bounded(lambda: _kernel(ent), self.budget, element)
        else:
            arrays, error = self.budget.run_here(lambda: _kernel(ent), element)
        return (None if arrays is None else TriangleMesh(*arrays)), error

    def centre(self, key: str) -> np.ndarray:
        """Centre of the node's mesh bounding box, or its placement origin without a mesh (metres)."""
        mesh = self.mesh(key)
        if mesh is None:
            return self.model.world_matrix(key)[:3, 3].copy()
        v = mesh.vertices
        return (v.min(axis=0) + v.max(axis=0)) / 2

    def box(self, key: str) -> Boxes | None:
        """The node's oriented bounding box, or None without a mesh; see :func:`yaw_box`."""
        mesh = self.mesh(key)
        return None if mesh is None else yaw_box(mesh.vertices)


def _kernel(ent: ifcopenshell.entity_instance) -> tuple[Arrays, str | None]:
    """The kernel's triangles of ``ent`` (None without any) and its error, if any."""
    try:
        shape: Any = ifcopenshell.geom.create_shape(_SETTINGS, ent)
        verts = np.asarray(shape.geometry.verts, dtype=np.float64).reshape(-1, 3)
        faces = np.asarray(shape.geometry.faces, dtype=np.int64).reshape(-1, 3)
        return ((verts, faces) if len(faces) else None), None
    except Exception as exc:  # the geometry kernel raises RuntimeError and others on bad input
        return None, str(exc)


def yaw_box(vertices: np.ndarray) -> Boxes:
    """Oriented bounding box of points, rotated about z only.

    Building elements are almost all extrusions along z, so the box is the minimum-area
    rectangle around the plan footprint times the z interval (spec section 3.3, [S]).
    """
    v = np.asarray(vertices, dtype=np.float64)
    z0, z1 = float(v[:, 2].min()), float(v[:, 2].max())
    plan = v[:, :2]
    if len(plan) > 64:  # building a shapely geometry of 16k sampled points is slow; hull them first
        try:
            plan = plan[ConvexHull(plan).vertices]
        except QhullError:  # collinear points: shapely below handles the degenerate case
            pass
    hull = shapely.MultiPoint(plan).convex_hull
    if hull.geom_type != "Polygon":  # all points on a line or one point: a flat box along it
        lo, hi = v[:, :2].min(axis=0), v[:, :2].max(axis=0)
        centre = np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (z0 + z1) / 2])
        half = np.array([(hi[0] - lo[0]) / 2, (hi[1] - lo[1]) / 2, (z1 - z0) / 2])
        return Boxes(centre[None], half[None], np.eye(3)[None])
    rect = np.asarray(hull.minimum_rotated_rectangle.exterior.coords)[:4]
    e1, e2 = rect[1] - rect[0], rect[2] - rect[1]
    l1, l2 = float(np.hypot(*e1)), float(np.hypot(*e2))
    x = e1 / l1 if l1 > 0 else np.array([1.0, 0.0])
    rot = np.array([[x[0], -x[1], 0.0], [x[1], x[0], 0.0], [0.0, 0.0, 1.0]])
    c2 = rect.mean(axis=0)
    centre = np.array([c2[0], c2[1], (z0 + z1) / 2])
    half = np.array([l1 / 2, l2 / 2, (z1 - z0) / 2])
    return Boxes(centre[None], half[None], rot[None])
