"""A thin authoring layer over ``ifcopenshell.api`` that builds valid IFC building models.

Every length this module takes is in metres; conversion to the model's length unit
happens here, once, so scene layouts never think about units. Elements are created
the way good IFC practice (and the spec, section 7.2) asks: spatial aggregation
project → site → building → storey, storey containment for physical elements,
openings voiding their host wall with doors and windows filling them, path
connections between walls, and explicit space boundaries.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import ifcopenshell
import ifcopenshell.api.aggregate
import ifcopenshell.api.context
import ifcopenshell.api.feature
import ifcopenshell.api.geometry
import ifcopenshell.api.material
import ifcopenshell.api.owner
import ifcopenshell.api.owner.settings
import ifcopenshell.api.project
import ifcopenshell.api.pset
import ifcopenshell.api.root
import ifcopenshell.api.spatial
import ifcopenshell.api.type
import ifcopenshell.api.unit
import ifcopenshell.guid
import ifcopenshell.util.representation
import ifcopenshell.util.unit
import numpy as np

api = ifcopenshell.api

#: Schemas the builder can write.
SCHEMAS = ("IFC4", "IFC2X3")
#: Length units the builder can write, as metres per model unit.
UNIT_SCALES = {"m": 1.0, "mm": 0.001}
#: Fixed timestamp (2024-01-01T00:00:00Z) so that files are byte-identical per seed.
FIXED_TIMESTAMP = 1704067200


def _set_owner(user: ifcopenshell.entity_instance, app: ifcopenshell.entity_instance) -> None:
    """Point ifcopenshell.api's owner-history hooks at ``user`` and ``app`` (needed for IFC2X3)."""

    def get_user(ifc: ifcopenshell.file) -> ifcopenshell.entity_instance | None:
        return user

    def get_application(ifc: ifcopenshell.file) -> ifcopenshell.entity_instance | None:
        return app

    ifcopenshell.api.owner.settings.get_user = get_user
    ifcopenshell.api.owner.settings.get_application = get_application


def _polygon_area(outline: Sequence[Point2]) -> float:
    """Area of a simple plan polygon, square metres (shoelace formula)."""
    xs = np.array([p.x for p in outline])
    ys = np.array([p.y for p in outline])
    return float(abs(np.dot(xs, np.roll(ys, -1)) - np.dot(ys, np.roll(xs, -1))) / 2)


@dataclass(frozen=True)
class Point2:
    """A plan point in metres."""

    x: float
    y: float


def frame_matrix(origin: Sequence[float], x_axis: Sequence[float] | np.ndarray) -> np.ndarray:
    """4x4 placement with z up, local x along ``x_axis`` (plan), origin in metres."""
    x = np.array([x_axis[0], x_axis[1], 0.0], dtype=float)
    x /= np.linalg.norm(x)
    z = np.array([0.0, 0.0, 1.0])
    y = np.cross(z, x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, y, z, origin
    return m


@dataclass
class IfcBuilder:
    """Builds one IFC model; lengths passed in are metres.

    Attributes:
        schema: "IFC4" or "IFC2X3".
        unit: "m" or "mm", the model's length unit.
    """

    schema: str = "IFC4"
    unit: str = "m"
    file: ifcopenshell.file = field(init=False)
    scale: float = field(init=False)
    """Metres per model length unit."""

    def __post_init__(self) -> None:
        if self.schema not in SCHEMAS:
            raise ValueError(f"schema must be one of {SCHEMAS}, got {self.schema!r}")
        if self.unit not in UNIT_SCALES:
            raise ValueError(f"unit must be one of {sorted(UNIT_SCALES)}, got {self.unit!r}")
        self.scale = UNIT_SCALES[self.unit]
        self.file = api.project.create_file(version="IFC2X3" if self.schema == "IFC2X3" else "IFC4")
        self._owner_settings = (ifcopenshell.api.owner.settings.get_user,
                                ifcopenshell.api.owner.settings.get_application)
        if self.schema == "IFC2X3":
            self._install_owner()
        f = self.file
        self.project = api.root.create_entity(f, ifc_class="IfcProject", name="buildbench project")
        length = api.unit.add_si_unit(f, unit_type="LENGTHUNIT", prefix="MILLI" if self.unit == "mm" else None)
        area = api.unit.add_si_unit(f, unit_type="AREAUNIT")
        volume = api.unit.add_si_unit(f, unit_type="VOLUMEUNIT")
        api.unit.assign_unit(f, units=[length, area, volume])
        model = api.context.add_context(f, context_type="Model")
        self.body = api.context.add_context(f, context_type="Model", context_identifier="Body",
                                            target_view="MODEL_VIEW", parent=model)
        self.axis = api.context.add_context(f, context_type="Plan", context_identifier="Axis",
                                            target_view="GRAPH_VIEW", parent=model)
        self.site = api.root.create_entity(f, ifc_class="IfcSite", name="Site")
        self.building = api.root.create_entity(f, ifc_class="IfcBuilding", name="Building")
        api.aggregate.assign_object(f, products=[self.site], relating_object=self.project)
        api.aggregate.assign_object(f, products=[self.building], relating_object=self.site)
        self._materials: dict[str, ifcopenshell.entity_instance] = {}
        self._types: dict[tuple[str, float, float], ifcopenshell.entity_instance] = {}
        self._batch = True
        self._pending: dict[int, list[ifcopenshell.entity_instance]] = {}

    @classmethod
    def attach(cls, model: ifcopenshell.file) -> IfcBuilder:
        """A builder that adds to an existing model (e.g. to make a ground truth from M0).

        Raises:
            ValueError: the model lacks a project, a site, a building or a Model/Body context.
        """
        b = object.__new__(cls)
        b.schema, b.file = str(model.schema), model
        b.scale = float(ifcopenshell.util.unit.calculate_unit_scale(model))
        b.unit = "mm" if abs(b.scale - 0.001) < 1e-12 else "m"
        b._owner_settings = (ifcopenshell.api.owner.settings.get_user,
                             ifcopenshell.api.owner.settings.get_application)
        found = {cls_name: model.by_type(cls_name) for cls_name in ("IfcProject", "IfcSite", "IfcBuilding")}
        missing = [name for name, items in found.items() if not items]
        body = ifcopenshell.util.representation.get_context(model, "Model", "Body", "MODEL_VIEW")
        if missing or body is None:
            raise ValueError(f"cannot add to this model: missing {missing or ['Model/Body context']}")
        b.project, b.site, b.building = found["IfcProject"][0], found["IfcSite"][0], found["IfcBuilding"][0]
        b.body = body
        b.axis = ifcopenshell.util.representation.get_context(model, "Plan", "Axis", "GRAPH_VIEW") or body
        b._materials = {str(m.Name): m for m in model.by_type("IfcMaterial")}
        b._types = {}
        b._batch, b._pending = False, {}
        if b.schema == "IFC2X3":
            history = b.project.OwnerHistory
            _set_owner(history.OwningUser, history.OwningApplication)
        return b

    def release(self) -> None:
        """Restore the owner-history hooks this builder replaced (``finish`` does it too)."""
        ifcopenshell.api.owner.settings.get_user, ifcopenshell.api.owner.settings.get_application = (
            self._owner_settings)

    # -- owner history (mandatory in IFC2X3 only) -------------------------------------------
    def _install_owner(self) -> None:
        f = self.file
        person = api.owner.add_person(f, identification="buildbench", family_name="buildbench",
                                      given_name="bench")
        org = api.owner.add_organisation(f, identification="BB", name="buildbench")
        user = api.owner.add_person_and_organisation(f, person=person, organisation=org)
        app = api.owner.add_application(f, application_developer=org, version="0.1",
                                        application_full_name="buildbench", application_identifier="buildbench")
        # ifcopenshell.api reads the active user through module-level hooks; they are put back
        # in finish() so other code in the process is unaffected.
        _set_owner(user, app)

    # -- spatial structure ------------------------------------------------------------------
    def storey(self, name: str, elevation_m: float) -> ifcopenshell.entity_instance:
        """Add a storey aggregated under the building, placed at ``elevation_m``."""
        st = api.root.create_entity(self.file, ifc_class="IfcBuildingStorey", name=name)
        st.Elevation = elevation_m / self.scale
        api.geometry.edit_object_placement(self.file, product=st, matrix=frame_matrix((0, 0, elevation_m), (1, 0)))
        api.aggregate.assign_object(self.file, products=[st], relating_object=self.building)
        return st

    def _contain(self, storey: ifcopenshell.entity_instance, element: ifcopenshell.entity_instance) -> None:
        if self._batch:
            # Collected and contained in finish(): spatial.assign_container re-derives every
            # product's placement relative to the storey (~8 ms each, ~5 s per complex scene);
            # our placements are absolute and stay valid, so one relation per storey suffices.
            self._pending.setdefault(storey.id(), []).append(element)
        else:
            api.spatial.assign_container(self.file, products=[element], relating_structure=storey)

    def _material(self, element: ifcopenshell.entity_instance, name: str) -> None:
        mat = self._materials.get(name)
        if mat is None:
            mat = api.material.add_material(self.file, name=name)
            self._materials[name] = mat
        api.material.assign_material(self.file, products=[element], type="IfcMaterial", material=mat)

    def _pset(self, element: ifcopenshell.entity_instance, name: str, props: dict[str, object]) -> None:
        pset = api.pset.add_pset(self.file, product=element, name=name)
        api.pset.edit_pset(self.file, pset=pset, properties=props)

    def _qto(self, element: ifcopenshell.entity_instance, name: str, lengths_m: dict[str, float],
             areas_m2: dict[str, float] | None = None) -> None:
        """Base quantities (as exporters write them), converted to the model's units."""
        values: dict[str, Any] = {k: v / self.scale for k, v in lengths_m.items()}
        values.update({k: v / self.scale**2 for k, v in (areas_m2 or {}).items()})
        qto = api.pset.add_qto(self.file, product=element, name=name)
        api.pset.edit_qto(self.file, qto=qto, properties=values)

    def _place(self, element: ifcopenshell.entity_instance, matrix: np.ndarray) -> None:
        """Give ``element`` an absolute placement from a world matrix in metres.

        Written directly rather than through ``geometry.edit_object_placement``, which
        re-derives relative placements and dominated generation time (~3 s per complex scene).
        """
        f = self.file
        loc = f.createIfcCartesianPoint([float(v) / self.scale for v in matrix[:3, 3]])
        axis = f.createIfcDirection([float(v) for v in matrix[:3, 2]])
        ref = f.createIfcDirection([float(v) for v in matrix[:3, 0]])
        element.ObjectPlacement = f.createIfcLocalPlacement(None, f.createIfcAxis2Placement3D(loc, axis, ref))

    # -- elements ----------------------------------------------------------------------------
    def wall(self, storey: ifcopenshell.entity_instance, elevation_m: float, p1: Point2, p2: Point2, *,
             thickness_m: float, height_m: float, name: str, external: bool) -> ifcopenshell.entity_instance:
        """A straight wall whose axis runs from ``p1`` to ``p2``, centred on the axis."""
        d = np.array([p2.x - p1.x, p2.y - p1.y])
        length = float(np.linalg.norm(d))
        wall = api.root.create_entity(self.file, ifc_class="IfcWall", name=name,
                                      predefined_type="SOLIDWALL" if self.schema == "IFC4" else None)
        self._place(wall, frame_matrix((p1.x, p1.y, elevation_m), d))
        body = api.geometry.add_wall_representation(self.file, context=self.body, length=length,
                                                    height=height_m, thickness=thickness_m,
                                                    offset=-thickness_m / 2)
        axis = api.geometry.add_axis_representation(self.file, context=self.axis,
                                                    axis=((0.0, 0.0), (length, 0.0)))
        api.geometry.assign_representation(self.file, product=wall, representation=axis)
        api.geometry.assign_representation(self.file, product=wall, representation=body)
        self._contain(storey, wall)
        self._material(wall, "Masonry" if external else "Plasterboard")
        self._pset(wall, "Pset_WallCommon", {"IsExternal": external, "LoadBearing": external})
        self._qto(wall, "Qto_WallBaseQuantities", {"Length": length, "Width": thickness_m, "Height": height_m})
        return wall

    def slab(self, storey: ifcopenshell.entity_instance, top_m: float, outline: Sequence[Point2], *,
             depth_m: float, name: str, roof: bool = False) -> ifcopenshell.entity_instance:
        """A flat slab over the plan polygon ``outline`` whose top face is at ``top_m``."""
        slab = api.root.create_entity(self.file, ifc_class="IfcSlab", name=name,
                                      predefined_type="ROOF" if roof else "FLOOR")
        self._place(slab, frame_matrix((0.0, 0.0, top_m - depth_m), (1, 0)))
        rep = api.geometry.add_slab_representation(self.file, context=self.body, depth=depth_m,
                                                   polyline=[(p.x, p.y) for p in outline])
        api.geometry.assign_representation(self.file, product=slab, representation=rep)
        self._contain(storey, slab)
        self._material(slab, "Concrete")
        self._pset(slab, "Pset_SlabCommon", {"IsExternal": roof, "LoadBearing": True})
        self._qto(slab, "Qto_SlabBaseQuantities", {"Depth": depth_m}, {"GrossArea": _polygon_area(outline)})
        return slab

    def column(self, storey: ifcopenshell.entity_instance, elevation_m: float, at: Point2, *,
               size_m: float, height_m: float, name: str) -> ifcopenshell.entity_instance:
        """A square column centred on ``at``."""
        col = api.root.create_entity(self.file, ifc_class="IfcColumn", name=name,
                                     predefined_type="COLUMN" if self.schema == "IFC4" else None)
        self._place(col, frame_matrix((at.x, at.y, elevation_m), (1, 0)))
        # Position is mandatory in IFC2X3 and harmless in IFC4.
        centre = self.file.createIfcAxis2Placement2D(self.file.createIfcCartesianPoint((0.0, 0.0)))
        profile = self.file.create_entity("IfcRectangleProfileDef", ProfileType="AREA", Position=centre,
                                          XDim=size_m / self.scale, YDim=size_m / self.scale)
        rep = api.geometry.add_profile_representation(self.file, context=self.body, profile=profile,
                                                      depth=height_m)
        api.geometry.assign_representation(self.file, product=col, representation=rep)
        self._contain(storey, col)
        self._material(col, "Concrete")
        self._pset(col, "Pset_ColumnCommon", {"LoadBearing": True})
        self._qto(col, "Qto_ColumnBaseQuantities", {"Length": height_m})
        return col

    def space(self, storey: ifcopenshell.entity_instance, elevation_m: float, outline: Sequence[Point2], *,
              height_m: float, name: str, long_name: str) -> ifcopenshell.entity_instance:
        """A space extruded from the plan polygon ``outline``, aggregated under ``storey``."""
        sp = api.root.create_entity(self.file, ifc_class="IfcSpace", name=name,
                                    predefined_type="INTERNAL" if self.schema == "IFC4" else None)
        sp.LongName = long_name
        if self.schema == "IFC2X3":
            sp.CompositionType = "ELEMENT"
            sp.InteriorOrExteriorSpace = "INTERNAL"
        self._place(sp, frame_matrix((0.0, 0.0, elevation_m), (1, 0)))
        rep = api.geometry.add_slab_representation(self.file, context=self.body, depth=height_m,
                                                   polyline=[(p.x, p.y) for p in outline])
        api.geometry.assign_representation(self.file, product=sp, representation=rep)
        api.aggregate.assign_object(self.file, products=[sp], relating_object=storey)
        self._qto(sp, "Qto_SpaceBaseQuantities", {"Height": height_m}, {"NetFloorArea": _polygon_area(outline)})
        return sp

    def bound(self, space: ifcopenshell.entity_instance, element: ifcopenshell.entity_instance, *,
              external: bool) -> ifcopenshell.entity_instance:
        """An ``IfcRelSpaceBoundary`` saying ``element`` bounds ``space`` (no boundary geometry)."""
        rel = api.root.create_entity(self.file, ifc_class="IfcRelSpaceBoundary")
        rel.RelatingSpace = space
        rel.RelatedBuildingElement = element
        rel.PhysicalOrVirtualBoundary = "PHYSICAL"
        rel.InternalOrExternalBoundary = "EXTERNAL" if external else "INTERNAL"
        return rel

    def connect(self, a: ifcopenshell.entity_instance, a_end: str, b: ifcopenshell.entity_instance,
                b_end: str) -> ifcopenshell.entity_instance:
        """``IfcRelConnectsPathElements`` between two walls (ends ATSTART / ATEND / ATPATH)."""
        return api.geometry.connect_path(self.file, relating_element=a, related_element=b,
                                         relating_connection=a_end, related_connection=b_end)

    def filling(self, storey: ifcopenshell.entity_instance, host: ifcopenshell.entity_instance, *,
                hostframe_matrix: np.ndarray, host_thickness_m: float, kind: str, along_m: float,
                sill_m: float, width_m: float, height_m: float, name: str,
                external: bool) -> tuple[ifcopenshell.entity_instance, ifcopenshell.entity_instance]:
        """An opening voiding ``host`` at ``along_m`` (opening's left edge) filled by a door/window.

        ``hostframe_matrix`` is the host wall's world placement (metres); ``kind`` is "door" or
        "window". Returns ``(opening, filling)``.
        """
        f = self.file
        local = np.eye(4)
        local[:3, 3] = (along_m, 0.0, sill_m)
        frame = hostframe_matrix @ local
        margin = 0.05
        opening = api.root.create_entity(f, ifc_class="IfcOpeningElement", name=f"{name} opening")
        self._place(opening, frame)
        rep = api.geometry.add_wall_representation(f, context=self.body, length=width_m, height=height_m,
                                                   thickness=host_thickness_m + 2 * margin,
                                                   offset=-(host_thickness_m / 2 + margin))
        api.geometry.assign_representation(f, product=opening, representation=rep)
        api.feature.add_feature(f, feature=opening, element=host)
        cls = "IfcDoor" if kind == "door" else "IfcWindow"
        ptype = None if self.schema == "IFC2X3" else kind.upper()
        fill = api.root.create_entity(f, ifc_class=cls, name=name, predefined_type=ptype)
        fill.OverallWidth = width_m / self.scale
        fill.OverallHeight = height_m / self.scale
        # Door and window bodies sit in local y in [0, lining depth]; put them on the wall's -y face.
        api.type.assign_type(f, related_objects=[fill], relating_type=self._filling_type(kind, width_m, height_m))
        api.feature.add_filling(f, opening=opening, element=fill)
        # Placed relative to its opening, as Revit exports do (spec section 9, "placement trap"):
        # moving the opening carries the filling along, so moving both moves the filling twice.
        offset = f.createIfcCartesianPoint((0.0, -host_thickness_m / 2 / self.scale, 0.0))
        fill.ObjectPlacement = f.createIfcLocalPlacement(opening.ObjectPlacement, f.createIfcAxis2Placement3D(offset))
        self._contain(storey, fill)
        self._material(fill, "Timber" if kind == "door" else "Glass")
        pset = "Pset_DoorCommon" if kind == "door" else "Pset_WindowCommon"
        self._pset(fill, pset, {"IsExternal": external})
        qto = "Qto_DoorBaseQuantities" if kind == "door" else "Qto_WindowBaseQuantities"
        self._qto(fill, qto, {"Width": width_m, "Height": height_m})
        return opening, fill

    def _filling_type(self, kind: str, width_m: float, height_m: float) -> ifcopenshell.entity_instance:
        """One door/window type per size, whose mapped body all its occurrences share (as Revit exports do)."""
        key = (kind, round(width_m, 4), round(height_m, 4))
        found = self._types.get(key)
        if found is not None:
            return found
        f = self.file
        if self.schema == "IFC2X3":
            cls = "IfcDoorStyle" if kind == "door" else "IfcWindowStyle"
        else:
            cls = "IfcDoorType" if kind == "door" else "IfcWindowType"
        ptype = None if self.schema == "IFC2X3" else kind.upper()
        typ = api.root.create_entity(f, ifc_class=cls, name=f"{kind} {width_m:.2f} x {height_m:.2f} m",
                                     predefined_type=ptype)
        if kind == "door":
            if self.schema != "IFC2X3":
                typ.OperationType = "SINGLE_SWING_LEFT"
            body = api.geometry.add_door_representation(f, context=self.body, overall_height=height_m / self.scale,
                                                        overall_width=width_m / self.scale, unit_scale=self.scale)
        else:
            if self.schema != "IFC2X3":
                typ.PartitioningType = "SINGLE_PANEL"
            body = api.geometry.add_window_representation(f, context=self.body,
                                                          overall_height=height_m / self.scale,
                                                          overall_width=width_m / self.scale, unit_scale=self.scale)
        if body is None:
            raise RuntimeError(f"ifcopenshell could not build a {kind} body of {width_m} x {height_m} m")
        api.geometry.assign_representation(f, product=typ, representation=body)
        self._types[key] = typ
        return typ

    # -- finishing ------------------------------------------------------------------------------
    def finish(self, seed: int) -> ifcopenshell.file:
        """Make the model deterministic for ``seed`` and return it.

        GlobalIds are redrawn from a seeded stream in entity-id order, owner-history dates
        and the header timestamp are fixed, so the same seed gives the same bytes.
        """
        for storey_id, elements in self._pending.items():
            rel = api.root.create_entity(self.file, ifc_class="IfcRelContainedInSpatialStructure")
            rel.RelatingStructure = self.file.by_id(storey_id)
            rel.RelatedElements = elements
        self._pending.clear()
        rng = np.random.default_rng([seed, 0x1FC])
        for ent in sorted(self.file.by_type("IfcRoot"), key=lambda e: e.id()):
            ent.GlobalId = ifcopenshell.guid.compress(uuid.UUID(bytes=rng.bytes(16)).hex)
        # ifcopenshell.api collects related objects and units in sets, whose order varies between runs.
        for rel in self.file.by_type("IfcRelationship") + self.file.by_type("IfcUnitAssignment"):
            for name, value in rel.get_info(recursive=False).items():
                if isinstance(value, tuple) and value and all(isinstance(v, ifcopenshell.entity_instance)
                                                              for v in value):
                    setattr(rel, name, sorted(value, key=lambda e: e.id()))
        histories = self.file.by_type("IfcOwnerHistory")
        for hist in histories:
            hist.CreationDate = FIXED_TIMESTAMP
            if hist.LastModifiedDate is not None:
                hist.LastModifiedDate = FIXED_TIMESTAMP
        if self.schema == "IFC2X3":
            # Some api calls (e.g. feature.add_filling) create relations without an owner history,
            # which IFC2X3 requires; give those the project's.
            for ent in self.file.by_type("IfcRoot"):
                if ent.OwnerHistory is None:
                    ent.OwnerHistory = self.project.OwnerHistory
        header = self.file.header
        header.file_name.time_stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(FIXED_TIMESTAMP))
        self.release()
        return self.file
