"""Rendered views of indoor scenes for the LEGO-Eval environment tools and SceneReVis.

Every view returns an ``(H, W, 4)`` uint8 RGBA numpy array, is deterministic (same scene,
same arguments, same bytes on a given GL driver), renders through :mod:`buildbench.render`
(moderngl on EGL) and draws labels with Pillow's bundled font.

Orientation (:mod:`~buildbench.scenes.views.frame`): the LEGO-Eval views show a plan with
north (+z) up and east (+x) right; SceneReVis's views follow its Blender import (+z down).

* :func:`scene_boxes` — the scene as coloured :mod:`buildbench.render` boxes and floors.
* :func:`topdown_scene`, :func:`topdown_room`, :func:`relation_overlay` — views from above.
* :func:`wall_view`, :func:`object_front_view`, :func:`object_top_view`,
  :func:`object_multiview` — close views.
* :func:`material_swatch` — a textured swatch of a floor or wall material.
* :func:`revis_views`, :func:`merge_views` — SceneReVis's top + diagonal feedback.

Every scene view takes ``geometry``: ``box`` (the default; objects are their boxes, as the
released tools draw them) or ``procedural`` / ``mesh`` (objects are their asset meshes with
per-face colours and baked textures, :mod:`~buildbench.scenes.views.meshes`); cameras and
image sizes are the same at every level.
"""

from buildbench.scenes.views.closeups import (
    MULTIVIEW_KEYS,
    WALL_KEEP_MARGIN_M,
    object_front_view,
    object_multiview,
    object_top_view,
    wall_view,
)
from buildbench.scenes.views.frame import REVIS_FRAME, THOR_FRAME, Frame, ViewInputError
from buildbench.scenes.views.geometry import SceneBoxes, scene_boxes
from buildbench.scenes.views.revis import merge_views, revis_views
from buildbench.scenes.views.swatch import material_swatch
from buildbench.scenes.views.topdown import relation_overlay, topdown_room, topdown_scene

__all__ = [
    "MULTIVIEW_KEYS",
    "REVIS_FRAME",
    "THOR_FRAME",
    "WALL_KEEP_MARGIN_M",
    "Frame",
    "SceneBoxes",
    "ViewInputError",
    "material_swatch",
    "merge_views",
    "object_front_view",
    "object_multiview",
    "object_top_view",
    "relation_overlay",
    "revis_views",
    "scene_boxes",
    "topdown_room",
    "topdown_scene",
    "wall_view",
]
