"""Read an IFC file into the typed property graph the BIM-Edit metrics work on.

Nodes are the "structurally relevant IFC entities" of the paper (App. E.3): every
``IfcElement`` (walls, slabs, doors, windows, columns, openings, proxies, …) and every
spatial element (site, building, storey, space), as the spec recommends (section 1.2).
Edges are the six relation types of App. E.3, subtypes included, as tuples
``(relation class, relating GlobalId, related GlobalId, qualifier)``; the qualifier
keeps the connection ends of path connections and the kind of space boundaries, so
re-typing a relation shows up as a change (the paper's "relational types c_r").

Each node carries a signature used to decide "modified": class, length unit, scalar
attributes, world placement (metres, rounded to 0.1 mm — spec section 3.1), and content hashes of
its representation, property sets, materials and type. Content hashes are Merkle
hashes over the STEP text with references replaced by the referenced entity's hash
and reals rounded to 7 significant digits, so rewritten-but-equal content (new entity
ids, float noise) does not count as a change.
"""

from __future__ import annotations

import hashlib
import inspect
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import ifcopenshell
import ifcopenshell.util.unit
import numpy as np

from buildbench.inputs import check_regular_file

from .errors import ModelError
from .schemas import readable_text
from .step_text import REAL, ZERO, is_zipped, round_real, statements, step_bytes
from .units import length_units

#: The relation classes of the topology graph (paper App. E.3); subtypes are included.
RELATION_TYPES = (
    "IfcRelContainedInSpatialStructure",
    "IfcRelAggregates",
    "IfcRelSpaceBoundary",
    "IfcRelVoidsElement",
    "IfcRelFillsElement",
    "IfcRelConnectsElements",
)

#: Direct attributes holding lengths, converted to metres before comparison.
LENGTH_ATTRIBUTES = frozenset({"OverallHeight", "OverallWidth", "Elevation", "RefElevation",
                               "ElevationWithFlooring"})
_SKIPPED_ATTRIBUTES = frozenset({"id", "type", "GlobalId", "OwnerHistory", "ObjectPlacement", "Representation"})
_REF = re.compile(r"#(\d+)")


#: The note on a model that assigns no length unit (IfcOpenShell then reads lengths as metres).
NO_LENGTH_UNIT = "the model assigns no length unit: lengths are read as metres"


Edge = tuple[str, str, str, str]
"""``(relation class, relating GlobalId, related GlobalId, qualifier)``."""


@dataclass
class Node:
    """One graph node.

    Attributes:
        key: the GlobalId (or ``#<step id>`` when the entity has none).
        ifc_class: the entity's class name.
        entity: the live entity in its file.
    """

    key: str
    ifc_class: str
    entity: ifcopenshell.entity_instance


@dataclass
class IfcModel:
    """A parsed model: nodes, edges, unit, and notes about anything odd in it.

    Attributes:
        path: the source file.
        file: the open ifcopenshell file.
        unit_scale_m: metres per model length unit.
        nodes: nodes by key.
        edges: the relation edges.
        statements: the file's entity statements (``#id=...``), for fast text-level diffs.
        notes: human-readable remarks (missing or duplicate GlobalIds, …).
    """

    path: Path
    file: ifcopenshell.file
    unit_scale_m: float
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: set[Edge] = field(default_factory=set)
    statements: frozenset[str] = frozenset()
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._hasher = _Hasher(self.file)
        self._placements = _Placements(self.unit_scale_m)
        self._signatures: dict[str, str] = {}
        #: ``diff.differing_statements`` against other models, by their id (each entry holds the
        #: model, so the id is not reused while it is kept).
        self.differing: dict[int, tuple[IfcModel, frozenset[str], frozenset[str]]] = {}

    @property
    def schema(self) -> str:
        """The IFC schema identifier, e.g. ``IFC4``."""
        return str(self.file.schema)

    def world_matrix(self, key: str) -> np.ndarray:
        """4x4 world placement of node ``key``, metres."""
        ent = self.nodes[key].entity
        return self._placements.matrix(getattr(ent, "ObjectPlacement", None))

    def signature(self, key: str) -> str:
        """Hash of everything that makes node ``key`` "modified" when it changes (memoised)."""
        found = self._signatures.get(key)
        if found is None:
            ent = self.nodes[key].entity
            found = _signature(ent, self.world_matrix(key), self.unit_scale_m, self._hasher)
            self._signatures[key] = found
        return found

    def node_key(self, ent: ifcopenshell.entity_instance) -> str | None:
        """The node key of ``ent`` if it is a node of this model."""
        key = guid_of(ent)
        node = self.nodes.get(key)
        return key if node is not None and node.entity.id() == ent.id() else None


#: ifcopenshell's open takes ``lazy`` from 0.9 on (older ones read every file in full).
_LAZY_OPEN = "lazy" in inspect.signature(ifcopenshell.open).parameters


def open_ifc(path: str | Path, *, lazy: bool = False) -> ifcopenshell.file:
    """Open an IFC file or raise :class:`ModelError` saying why it cannot be read.

    ``lazy`` parses each entity's attributes when first read (ifcopenshell's index-only open,
    ~3x faster on a 40k-entity file): for files known to be well formed only, since a
    malformed attribute then raises ``RuntimeError`` where it is read instead of here.
    """
    p = Path(path)
    try:
        size = check_regular_file(p, limit_name="input_file_bytes").st_size
    except FileNotFoundError:
        raise ModelError(f"{p}: no such file") from None
    except OSError as exc:
        raise ModelError(f"{p}: {exc.strerror or exc}") from None
    if size == 0:
        raise ModelError(f"{p}: file is empty")
    if p.suffix.lower() == ".ifcxml":  # IfcOpenShell would raise NotImplementedError
        raise ModelError(f"{p}: an ifcXML file, which is not read (export the model as IFC-SPF, .ifc)")
    unpacked = step_bytes(p) if is_zipped(p) else None
    try:
        if unpacked is not None:
            return _open_unpacked(p, unpacked)
        if lazy and _LAZY_OPEN:
            return cast(Any, ifcopenshell.open)(str(p), lazy=True)
        return ifcopenshell.open(str(p))
    except Exception as exc:  # ifcopenshell raises several unrelated types for unreadable input
        text = readable_text(p)  # a schema identifier written under another name (IFC2X3_FINAL), a BOM
        if text is not None:
            try:
                fixed = ifcopenshell.file.from_string(text)
                fixed.schema  # noqa: B018  (text with no STEP header, ifcXML after a BOM, parses to no schema)
                return fixed
            except Exception:
                pass  # unreadable under the schema it stands for too: report the first error
        raise ModelError(f"{p}: not a readable IFC file ({type(exc).__name__}: {exc})") from exc


def _open_unpacked(p: Path, data: bytes) -> ifcopenshell.file:
    """Open an archive's model from its bounded unpacked bytes (IfcOpenShell's own ``.ifczip``
    reading unpacks without a size bound)."""
    with tempfile.TemporaryDirectory(prefix="buildbench-ifczip-") as tmp:
        inner = Path(tmp) / f"{p.stem}.ifc"
        inner.write_bytes(data)
        return ifcopenshell.open(str(inner))


def load_model(path: str | Path, data: bytes | None = None, *, lazy: bool = False) -> IfcModel:
    """Parse ``path`` into an :class:`IfcModel`; ``data``, when given, is the file's content
    already read (it is not read again for the statements); ``lazy`` as :func:`open_ifc`.

    Raises:
        ModelError: the file is missing, empty, cut short or not parseable IFC, or has no length unit
            that can be read.
    """
    f = open_ifc(path, lazy=lazy)
    _refuse_placement_cycles(f, path)
    assigned = length_units(f, path)
    try:
        scale = float(ifcopenshell.util.unit.calculate_unit_scale(f))
    except Exception as exc:  # a broken IfcUnitAssignment raises from deep inside util.unit
        raise ModelError(f"{path}: cannot read the model's length unit ({exc})") from exc
    model = IfcModel(path=Path(path), file=f, unit_scale_m=scale, statements=statements(Path(path), data))
    if not assigned:
        model.notes.append(NO_LENGTH_UNIT)
    for ent in _node_entities(f):
        key = _key(ent, model)
        if key in model.nodes:
            model.notes.append(f"duplicate GlobalId {key} on #{ent.id()} ({ent.is_a()}); kept #"
                               f"{model.nodes[key].entity.id()}")
            continue
        model.nodes[key] = Node(key, ent.is_a(), ent)
    try:  # every later measure needs these; a malformed one is the file's fault, named here
        for key in model.nodes:
            model.world_matrix(key)
        model.edges = set(_edges(f, model))
    except ModelError as exc:
        raise ModelError(f"{path}: {exc}") from None
    return model


def _refuse_placement_cycles(f: ifcopenshell.file, path: str | Path) -> None:
    """Raise :class:`ModelError` when a chain of local placements comes back to itself: the
    geometry kernel crashes the process on such a file, so it must not get that far."""
    acyclic: set[int] = set()
    for start in f.by_type("IfcLocalPlacement"):
        chain: list[int] = []
        placement: ifcopenshell.entity_instance | None = start
        while placement is not None and placement.id() not in acyclic:
            if placement.id() in chain:
                raise ModelError(f"{path}: IfcLocalPlacement #{placement.id()} is placed relative to itself "
                                 f"(the chain {' -> '.join(f'#{i}' for i in chain)} is a cycle)")
            chain.append(placement.id())
            parent = placement.PlacementRelTo
            placement = parent if isinstance(parent, ifcopenshell.entity_instance) and parent.is_a(
                "IfcLocalPlacement") else None
        acyclic.update(chain)


def _node_entities(f: ifcopenshell.file) -> Iterator[ifcopenshell.entity_instance]:
    spatial = "IfcSpatialStructureElement" if f.schema == "IFC2X3" else "IfcSpatialElement"
    seen: set[int] = set()
    for cls in ("IfcElement", spatial):
        for ent in f.by_type(cls):
            if ent.id() not in seen:
                seen.add(ent.id())
                yield ent


def _key(ent: ifcopenshell.entity_instance, model: IfcModel) -> str:
    guid = getattr(ent, "GlobalId", None)
    if guid:
        return str(guid)
    model.notes.append(f"#{ent.id()} ({ent.is_a()}) has no GlobalId")
    return f"#{ent.id()}"


def guid_of(ent: ifcopenshell.entity_instance | None) -> str:
    """GlobalId of ``ent``, ``#<id>`` when it has none, ``-`` for None."""
    if ent is None:
        return "-"
    if not isinstance(ent, ifcopenshell.entity_instance):  # a value where a malformed file names none
        return repr(ent)
    # GlobalId is attribute 0 of every IfcRoot; get_argument skips the slow __getattr__ path.
    guid = ent.get_argument(0) if ent.is_a("IfcRoot") else None
    return str(guid) if guid else f"#{ent.id()}"


#: Per relation class: (relating attribute, related attribute, qualifier attributes).
_EDGE_ATTRIBUTES = {
    "IfcRelContainedInSpatialStructure": ("RelatingStructure", "RelatedElements", ()),
    "IfcRelAggregates": ("RelatingObject", "RelatedObjects", ()),
    "IfcRelSpaceBoundary": ("RelatingSpace", "RelatedBuildingElement",
                            ("PhysicalOrVirtualBoundary", "InternalOrExternalBoundary")),
    "IfcRelVoidsElement": ("RelatingBuildingElement", "RelatedOpeningElement", ()),
    "IfcRelFillsElement": ("RelatingOpeningElement", "RelatedBuildingElement", ()),
    "IfcRelConnectsElements": ("RelatingElement", "RelatedElement", ()),
}
_PATH_QUALIFIER = ("RelatingConnectionType", "RelatedConnectionType")


def _edges(f: ifcopenshell.file, model: IfcModel) -> Iterator[Edge]:
    index: dict[tuple[str, str], int] = {}
    guids: dict[int, str] = {}

    def arg(rel: ifcopenshell.entity_instance, name: str) -> object:
        # Attribute positions are fixed per class; looking them up once keeps this loop fast.
        key = (rel.is_a(), name)
        i = index.get(key)
        if i is None:
            i = index[key] = rel.get_argument_index(name)
        return rel.get_argument(i)

    def guid(ent: ifcopenshell.entity_instance | None, rel: ifcopenshell.entity_instance) -> str:
        # Relation ends are always IfcRoot subtypes, whose attribute 0 is the GlobalId.
        if ent is None:
            return "-"
        if not isinstance(ent, ifcopenshell.entity_instance) or not ent.id() or not ent.is_a("IfcRoot"):
            raise ModelError(f"#{rel.id()} ({rel.is_a()}) relates {ent!r}, which is not an object")
        eid = ent.id()
        found = guids.get(eid)
        if found is None:
            found = guids[eid] = str(ent.get_argument(0) or f"#{eid}")
        return found

    for base, (relating, related, qualifier) in _EDGE_ATTRIBUTES.items():
        for rel in f.by_type(base):
            cls = rel.is_a()
            names = _PATH_QUALIFIER if cls == "IfcRelConnectsPathElements" else qualifier
            q = "/".join(str(arg(rel, n)) for n in names)
            head = guid(arg(rel, relating), rel)  # type: ignore[arg-type]
            tails = arg(rel, related)
            for el in tails if isinstance(tails, tuple) else (tails,):
                yield (cls, head, guid(el, rel), q)  # type: ignore[arg-type]


class _Hasher:
    """Merkle content hashes of entities, memoised per file."""

    def __init__(self, f: ifcopenshell.file) -> None:
        self.file = f
        self.memo: dict[int, str] = {}

    def entity(self, ent: ifcopenshell.entity_instance | None) -> str:
        """Content hash of ``ent`` and everything it references (GlobalIds and owners included)."""
        if ent is None:
            return "-"
        if not isinstance(ent, ifcopenshell.entity_instance) or not ent.id():
            # an inline value, or a value where a malformed file should name an entity
            return hashlib.blake2b(f"value:{ent}".encode(), digest_size=10).hexdigest()
        return self._by_id(ent.id(), ent)

    def _by_id(self, eid: int, ent: ifcopenshell.entity_instance | None = None) -> str:
        # Depth first with a stack of its own, references left to right (the order fixes which
        # entity of a reference cycle sees the other's placeholder): a chain of thousands of
        # boolean operands went past Python's recursion limit.
        memo = self.memo
        found = memo.get(eid)
        if found is not None:
            return found
        first = self._open(eid, ent)
        stack = [first] if first is not None else []
        while stack:
            frame = stack[-1]
            refs = frame.refs
            while frame.next < len(refs) and refs[frame.next] in memo:
                frame.next += 1
            if frame.next < len(refs):
                child = self._open(refs[frame.next])
                if child is not None:
                    stack.append(child)
                continue
            stack.pop()
            body = _REF.sub(lambda m: memo[int(m.group(1))], frame.body)
            memo[frame.eid] = hashlib.blake2b(body.encode(), digest_size=10).hexdigest()
        return memo[eid]

    def _open(self, eid: int, ent: ifcopenshell.entity_instance | None = None) -> _Frame | None:
        """Start hashing ``eid``: its placeholder in the memo (a reference cycle hashes to it) and
        its body to finish; None when the file has no such entity (it hashes as missing)."""
        self.memo[eid] = f"cycle{eid}"
        if ent is None:
            try:
                ent = self.file.by_id(eid)
            except RuntimeError:
                self.memo[eid] = f"missing{eid}"
                return None
        line = str(ent)
        body = REAL.sub(round_real, line[line.index("=") + 1:])
        return _Frame(eid, body, [int(r) for r in _REF.findall(body)])


@dataclass
class _Frame:
    """An entity being hashed: its id, its body (reals rounded) and the references still to visit."""

    eid: int
    body: str
    refs: list[int]
    next: int = 0


class _Placements:
    """World matrices (metres) of ``IfcLocalPlacement`` chains, memoised.

    Written here rather than using ``ifcopenshell.util.placement`` because that helper
    took ~0.8 s for the ~600 elements of a complex scene; this takes a few milliseconds.
    """

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.memo: dict[int, np.ndarray] = {}

    def matrix(self, placement: ifcopenshell.entity_instance | None) -> np.ndarray:
        """Raises :class:`ModelError` for a placement whose attributes are not what the schema
        says (IfcOpenShell reads such files without complaint)."""
        # Up the chain to a known matrix or its root, then down: a loop, as a chain thousands of
        # placements long (a malformed or hostile file) went past Python's recursion limit.
        chain: list[ifcopenshell.entity_instance] = []
        m = np.eye(4)
        while placement is not None:
            if not isinstance(placement, ifcopenshell.entity_instance):
                raise ModelError(f"a placement is {placement!r}, not a placement entity")
            if not placement.is_a("IfcLocalPlacement"):
                break
            found = self.memo.get(placement.id())
            if found is not None:
                m = found
                break
            chain.append(placement)
            placement = placement.PlacementRelTo
        for link in reversed(chain):
            try:
                m = m @ self._axis(link.RelativePlacement)
            except (AttributeError, IndexError, TypeError, ValueError) as exc:
                raise ModelError(f"IfcLocalPlacement #{link.id()}: its RelativePlacement cannot be read "
                                 f"({exc})") from None
            self.memo[link.id()] = m
        return m

    def _axis(self, a: ifcopenshell.entity_instance | None) -> np.ndarray:
        m = np.eye(4)
        if a is None:
            return m
        loc = list(a.Location.Coordinates) if a.Location is not None else [0.0, 0.0, 0.0]
        loc += [0.0] * (3 - len(loc))
        m[:3, 3] = np.asarray(loc, dtype=float) * self.scale
        if a.is_a("IfcAxis2Placement2D"):
            x = _unit(a.RefDirection, (1.0, 0.0))
            m[:2, 0], m[:2, 1] = x[:2], (-x[1], x[0])
            return m
        z = _unit(getattr(a, "Axis", None), (0.0, 0.0, 1.0))
        x = _unit(a.RefDirection, (1.0, 0.0, 0.0))
        x = x - np.dot(x, z) * z
        if np.linalg.norm(x) < 1e-12:  # RefDirection parallel to Axis: pick any perpendicular
            x = _cross(z, np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0]))
        x /= np.linalg.norm(x)
        m[:3, 0], m[:3, 1], m[:3, 2] = x, _cross(z, x), z
        return m


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """3-vector cross product; np.cross costs ~20 µs of dispatch per call, this ~2 µs."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _unit(direction: ifcopenshell.entity_instance | None, default: tuple[float, ...]) -> np.ndarray:
    v = np.zeros(3)
    ratios = list(direction.DirectionRatios) if direction is not None else list(default)
    v[: len(ratios)] = ratios
    n = np.linalg.norm(v)
    if n < 1e-12:
        v[: len(default)] = default
        return v
    return v / n


def _signature(ent: ifcopenshell.entity_instance, world: np.ndarray, scale: float, hasher: _Hasher) -> str:
    # The unit joins the signature as representations are hashed in model units: the same numbers
    # in feet instead of millimetres are another shape.
    parts = [ent.is_a(), f"{scale:.9g}"]
    for name, value in ent.get_info(recursive=False).items():
        if name in _SKIPPED_ATTRIBUTES or isinstance(value, ifcopenshell.entity_instance):
            continue
        if isinstance(value, float):
            value = value * scale if name in LENGTH_ATTRIBUTES else value
            value = f"{0.0 if abs(value) < ZERO else value:.6g}"
        parts.append(f"{name}={value!r}")
    rot = np.round(world[:3, :3], 6) + 0.0  # + 0.0 folds -0.0 into 0.0
    parts.append(",".join(f"{v:.6f}" for v in rot.ravel()))
    parts.append(",".join(f"{v:.4f}" for v in np.round(world[:3, 3], 4) + 0.0))
    rep = getattr(ent, "Representation", None)
    parts.append(hasher.entity(rep))
    parts.append(hasher.entity(_unmeasured_placement(ent)))
    parts.extend(sorted(_definition_hashes(ent, hasher)))
    return hashlib.blake2b("|".join(parts).encode(), digest_size=12).hexdigest()


def _unmeasured_placement(ent: ifcopenshell.entity_instance) -> ifcopenshell.entity_instance | None:
    """The first grid or linear placement (IFC4X3) in ``ent``'s placement chain, which the world
    matrix cannot measure (it reads local placements only), so its content joins the signature."""
    placement = getattr(ent, "ObjectPlacement", None)
    while placement is not None and placement.is_a("IfcLocalPlacement"):
        placement = placement.PlacementRelTo
    return placement


def _pset_hash(pdef: ifcopenshell.entity_instance, hasher: _Hasher) -> str:
    if not isinstance(pdef, ifcopenshell.entity_instance) or not pdef.id():  # a malformed file's value
        return "pset:" + hasher.entity(pdef)
    items = getattr(pdef, "HasProperties", None) or getattr(pdef, "Quantities", None) or ()
    return "pset:" + str(pdef.Name) + ":" + ",".join(
        sorted(hasher.entity(p) for p in (items if isinstance(items, tuple) else (items,))))


def _type_hash(typ: ifcopenshell.entity_instance, hasher: _Hasher) -> str:
    """The type an element has, by content: its scalar attributes and property sets, which the
    element inherits (a type's fire rating is each of its walls'; ``get_psets`` reads them so),
    so editing them modifies every element of the type. Its representation maps reach an
    element's signature through the element's mapped items, where it uses them."""
    if not isinstance(typ, ifcopenshell.entity_instance) or not typ.id():  # a malformed file's value
        return "type:" + hasher.entity(typ)
    attributes = [f"{name}={value!r}" for name, value in typ.get_info(recursive=False).items()
                  if name not in _SKIPPED_ATTRIBUTES and not isinstance(value, (ifcopenshell.entity_instance, tuple))]
    psets = getattr(typ, "HasPropertySets", None) or ()
    return ":".join(["type", guid_of(typ), typ.is_a(), *attributes,
                     *sorted(_pset_hash(d, hasher) for d in (psets if isinstance(psets, tuple) else (psets,)))])


def _definition_hashes(ent: ifcopenshell.entity_instance, hasher: _Hasher) -> Iterator[str]:
    """Hashes of the property sets, type and materials attached to ``ent``."""
    for rel in getattr(ent, "IsDefinedBy", ()) or ():
        if rel.is_a("IfcRelDefinesByProperties"):
            pdefs = rel.RelatingPropertyDefinition
            # IFC4 lets one relation carry a set of property sets (IfcPropertySetDefinitionSet)
            for pdef in pdefs if isinstance(pdefs, tuple) else (pdefs,):
                if pdef is not None:
                    yield _pset_hash(pdef, hasher)
        elif rel.is_a("IfcRelDefinesByType"):
            yield _type_hash(rel.RelatingType, hasher)
    for rel in getattr(ent, "IsTypedBy", ()) or ():
        yield _type_hash(rel.RelatingType, hasher)
    for rel in getattr(ent, "HasAssociations", ()) or ():
        if rel.is_a("IfcRelAssociatesMaterial"):
            yield "material:" + hasher.entity(rel.RelatingMaterial)
