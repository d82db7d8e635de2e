"""Pure numeric geometry over NumPy arrays: transforms, boxes, contacts, voxels, metrics.

Everything is in metres and radians, vectorised over batches, and free of domain
vocabulary. Modules, one concept each:

* :mod:`~buildbench.geometry.transforms` — 4x4 transforms, quaternion/Euler conventions.
* :mod:`~buildbench.geometry.boxes` — :class:`Boxes`, a batch of oriented boxes.
* :mod:`~buildbench.geometry.overlap` — exact separating-axis overlap and distance.
* :mod:`~buildbench.geometry.intersection` — exact intersection volume and IoU.
* :mod:`~buildbench.geometry.contacts` — sort-and-sweep contact pairs.
* :mod:`~buildbench.geometry.voxels` — occupancy grids and voxel IoU.
* :mod:`~buildbench.geometry.matching` — Hungarian matching with thresholds.
* :mod:`~buildbench.geometry.chamfer` — Chamfer, F-score, Hausdorff.
* :mod:`~buildbench.geometry.sampling` — box meshes and seeded surface sampling.

Example:
    >>> import numpy as np
    >>> from buildbench.geometry import Boxes, contact_pairs, obb_iou
    >>> boxes = Boxes.from_aabbs([[0, 0, 0], [1, 0, 0], [5, 5, 5]], [[1, 1, 1], [2, 1, 1], [6, 6, 6]])
    >>> contact_pairs(boxes, tol=1e-6).tolist()
    [[0, 1]]
    >>> float(obb_iou(boxes.subset([0]), boxes.subset([0]))[0])
    1.0

Submodules load on first use of one of their names (PEP 562), so importing this package, or
a light name such as :class:`Boxes`, does not import SciPy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from buildbench.lazy import lazy_exports

if TYPE_CHECKING:
    from buildbench.geometry.boxes import BOX_CORNER_SIGNS, BOX_EDGES, AABBs, Boxes
    from buildbench.geometry.chamfer import (
        PointSetDistances,
        chamfer_distance,
        nearest_distances,
        point_set_distances,
    )
    from buildbench.geometry.contacts import aabb_pairs, contact_pairs
    from buildbench.geometry.intersection import obb_intersection_volume, obb_iou, obb_iou_matrix
    from buildbench.geometry.matching import Assignment, match_max_score, match_min_cost
    from buildbench.geometry.overlap import obb_distance, obb_overlaps, pair_overlaps, sat_separation
    from buildbench.geometry.sampling import (
        SurfaceSamples,
        TriangleMesh,
        allocate_samples,
        box_mesh,
        sample_surface,
    )
    from buildbench.geometry.transforms import (
        TRS,
        apply_to_points,
        apply_to_vectors,
        compose,
        decompose,
        invert_rigid,
        make_transform,
        quat_wxyz_to_xyzw,
        quat_xyzw_to_wxyz,
        rotation_from_euler_xyz,
        rotation_from_quat_wxyz,
        rotation_from_quat_xyzw,
        rotation_to_euler_xyz,
        rotation_to_quat_wxyz,
    )
    from buildbench.geometry.voxels import (
        DEFAULT_MAX_VOXELS,
        Occupancy,
        VoxelGrid,
        grid_for_bounds,
        occupancy_iou,
        voxel_iou,
        voxelize_boxes,
        voxelize_points,
    )

# The public names of each submodule.
_NAMES = {
    "boxes": ("BOX_CORNER_SIGNS", "BOX_EDGES", "AABBs", "Boxes"),
    "chamfer": ("PointSetDistances", "chamfer_distance", "nearest_distances", "point_set_distances"),
    "contacts": ("aabb_pairs", "contact_pairs"),
    "intersection": ("obb_intersection_volume", "obb_iou", "obb_iou_matrix"),
    "matching": ("Assignment", "match_max_score", "match_min_cost"),
    "overlap": ("obb_distance", "obb_overlaps", "pair_overlaps", "sat_separation"),
    "sampling": ("SurfaceSamples", "TriangleMesh", "allocate_samples", "box_mesh", "sample_surface"),
    "transforms": (
        "TRS", "apply_to_points", "apply_to_vectors", "compose", "decompose", "invert_rigid", "make_transform",
        "quat_wxyz_to_xyzw", "quat_xyzw_to_wxyz", "rotation_from_euler_xyz", "rotation_from_quat_wxyz",
        "rotation_from_quat_xyzw", "rotation_to_euler_xyz", "rotation_to_quat_wxyz",
    ),
    "voxels": (
        "DEFAULT_MAX_VOXELS", "Occupancy", "VoxelGrid", "grid_for_bounds", "occupancy_iou", "voxel_iou",
        "voxelize_boxes", "voxelize_points",
    ),
}
if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(__name__, _NAMES)

__all__ = [
    "AABBs",
    "Assignment",
    "BOX_CORNER_SIGNS",
    "BOX_EDGES",
    "Boxes",
    "DEFAULT_MAX_VOXELS",
    "Occupancy",
    "PointSetDistances",
    "SurfaceSamples",
    "TRS",
    "TriangleMesh",
    "VoxelGrid",
    "aabb_pairs",
    "allocate_samples",
    "apply_to_points",
    "apply_to_vectors",
    "box_mesh",
    "chamfer_distance",
    "compose",
    "contact_pairs",
    "decompose",
    "grid_for_bounds",
    "invert_rigid",
    "make_transform",
    "match_max_score",
    "match_min_cost",
    "nearest_distances",
    "obb_distance",
    "obb_intersection_volume",
    "obb_iou",
    "obb_iou_matrix",
    "obb_overlaps",
    "occupancy_iou",
    "pair_overlaps",
    "point_set_distances",
    "quat_wxyz_to_xyzw",
    "quat_xyzw_to_wxyz",
    "rotation_from_euler_xyz",
    "rotation_from_quat_wxyz",
    "rotation_from_quat_xyzw",
    "rotation_to_euler_xyz",
    "rotation_to_quat_wxyz",
    "sample_surface",
    "sat_separation",
    "voxel_iou",
    "voxelize_boxes",
    "voxelize_points",
]
