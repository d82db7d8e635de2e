"""SceneReVis's domain types in one place (the suite's ``model`` room).

Scenes are the shared indoor-scene model (:mod:`buildbench.scenes.model`: metres, y up, yaw in
degrees) written as SceneReVis flat JSON. Re-exported here beside the suite's own types:

* the scene an episode edits: :class:`SceneState` and how objects are addressed
  (:class:`Addressing`), from :mod:`.actions`;
* the scene the checks read: :class:`RoomLayout` (objects as boxes in metres), from
  :mod:`.check.layout`;
* an episode's product: :class:`SceneReVisOutcome`, from :mod:`.outcome`.
"""

from __future__ import annotations

from buildbench.scenes.model import Scene, SceneObject

from .actions import Addressing, ReplyError, SceneState
from .check.layout import RoomLayout
from .outcome import SceneReVisOutcome

__all__ = ["Addressing", "ReplyError", "RoomLayout", "Scene", "SceneObject", "SceneReVisOutcome", "SceneState"]
