"""Boxes sure to hold an element's tessellated mesh, read from its shape parameters without the
geometry kernel: a quick test of which elements cannot touch another before tessellating them.

Frame adjacency (:func:`.describe.frame_adjacency`) asks which of a structural model's slabs,
columns, beams or members meet an element's box; a Tekla frame has ~2,000 beams at ~10 ms of
kernel time each. An element whose outer box does not meet the target's cannot touch it, so
only the few whose outer box does are tessellated; the answer is the same.

The outer box is the union over every representation of the element (whichever the kernel
draws) of its items' boxes: an extrusion's profile box swept along its direction, the first
operand of a boolean difference or intersection (the result lies inside it), both operands of
a union, the points of a faceted brep, a polyline (or an indexed poly curve of lines) or a bounding box item; openings only take
material away. Anything else (curved profiles other than circles, mapped items, swept disks,
profiles with their own conventions for where they sit) gives None: such an element is
tessellated as before. A margin (:data:`MARGIN_M`) covers rounding.
"""

from __future__ import annotations

import ifcopenshell
import ifcopenshell.util.placement
import numpy as np

from buildbench.suites.bimedit.check.model import IfcModel

#: Added on every side of an outer box (metres): kernel rounding, tolerances, units.
MARGIN_M = 0.01
#: Profiles whose box about their position is known exactly (subtypes with their own geometry,
#: e.g. an asymmetric I-shape whose top flange may be wider, are left out by exact class).
_CENTRED = {"IfcRectangleProfileDef": ("XDim", "YDim"), "IfcRectangleHollowProfileDef": ("XDim", "YDim"),
            "IfcRoundedRectangleProfileDef": ("XDim", "YDim"), "IfcIShapeProfileDef": ("OverallWidth", "OverallDepth")}


class _Unsupported(Exception):
    """An item this module cannot bound."""


def outer_box(model: IfcModel, ent: ifcopenshell.entity_instance) -> np.ndarray | None:
    """``[min, max]`` (metres, world) sure to hold ``ent``'s mesh, or None where it cannot be read."""
    rep = getattr(ent, "Representation", None)
    if rep is None:
        return None
    try:
        pts = [_item_points(item) for r in rep.Representations or () for item in r.Items or ()]
    except (_Unsupported, AttributeError, TypeError, ValueError, RuntimeError):
        return None
    if not pts:
        return None
    local = np.vstack(pts) * model.unit_scale_m
    world = model.world_matrix(ent.GlobalId)
    placed = local @ world[:3, :3].T + world[:3, 3]
    return np.stack([placed.min(axis=0) - MARGIN_M, placed.max(axis=0) + MARGIN_M])


def _item_points(item: ifcopenshell.entity_instance) -> np.ndarray:
    """Points (model units, the representation's frame) whose box holds ``item``."""
    if item.is_a("IfcBooleanResult"):
        if item.Operator == "UNION":
            return np.vstack([_item_points(item.FirstOperand), _item_points(item.SecondOperand)])
        return _item_points(item.FirstOperand)
    if item.is_a("IfcExtrudedAreaSolid"):
        return _extrusion(item)
    if item.is_a("IfcFacetedBrep") or item.is_a("IfcPolyline"):
        return _points(item)
    if item.is_a("IfcBoundingBox"):
        c = np.array(item.Corner.Coordinates, dtype=float)
        return np.array([c, c + (item.XDim, item.YDim, item.ZDim)], dtype=float)
    raise _Unsupported(item.is_a())


def _points(item: ifcopenshell.entity_instance) -> np.ndarray:
    if item.is_a("IfcPolyline"):
        coords = [p.Coordinates for p in item.Points]
    else:
        coords = [p.Coordinates for face in item.Outer.CfsFaces for bound in face.Bounds
                  for p in bound.Bound.Polygon]
    out = np.zeros((len(coords), 3))
    for i, c in enumerate(coords):
        out[i, :len(c)] = c
    if not len(out):
        raise _Unsupported("no points")
    return out


def _curve_points(curve: ifcopenshell.entity_instance) -> np.ndarray:
    """The (x, y) points of a closed profile's outer curve made of straight segments."""
    if curve.is_a("IfcPolyline"):
        return _points(curve)[:, :2]
    # an indexed poly curve of lines only (an arc may bulge past its points)
    if curve.is_a("IfcIndexedPolyCurve") and all(s.is_a("IfcLineIndex") for s in curve.Segments or ()):
        pts = np.array(curve.Points.CoordList, dtype=float)
        if pts.ndim == 2 and len(pts) and pts.shape[1] >= 2:
            return pts[:, :2]
    raise _Unsupported(curve.is_a())


def _extrusion(item: ifcopenshell.entity_instance) -> np.ndarray:
    corners = _profile_corners(item.SweptArea)
    d = np.array(item.ExtrudedDirection.DirectionRatios, dtype=float)
    d = d / np.linalg.norm(d) * float(item.Depth)
    pts = np.vstack([corners, corners + d])
    if item.Position is not None:
        m = ifcopenshell.util.placement.get_axis2placement(item.Position)
        pts = pts @ m[:3, :3].T + m[:3, 3]
    return pts


def _profile_corners(profile: ifcopenshell.entity_instance) -> np.ndarray:
    """The four corners (z = 0) of a box holding the profile, in the extrusion's frame."""
    cls = profile.is_a()
    if cls in _CENTRED:
        a, b = (float(getattr(profile, k)) / 2 for k in _CENTRED[cls])
        lo, hi = np.array([-a, -b]), np.array([a, b])
    elif cls in ("IfcCircleProfileDef", "IfcCircleHollowProfileDef"):
        r = float(profile.Radius)
        lo, hi = np.array([-r, -r]), np.array([r, r])
    elif cls == "IfcArbitraryClosedProfileDef":
        pts = _curve_points(profile.OuterCurve)
        lo, hi = pts.min(axis=0), pts.max(axis=0)
    else:
        raise _Unsupported(cls)
    corners = np.array([[lo[0], lo[1], 0.0], [hi[0], lo[1], 0.0], [lo[0], hi[1], 0.0], [hi[0], hi[1], 0.0]])
    position = getattr(profile, "Position", None)  # arbitrary profiles have none: their points are placed
    if position is not None:
        m = ifcopenshell.util.placement.get_axis2placement(position)
        corners = corners @ m[:3, :3].T + m[:3, 3]
    return corners
