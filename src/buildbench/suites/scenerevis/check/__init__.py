"""Physics of SceneReVis rooms: layouts, collisions, bounds, voxels, support, Algorithm 2."""

from .layout import RoomLayout, layout_from_scene, parse_layout, scene_objects, scene_of
from .optimize import OptimizeResult, optimize_scene
from .physics import (
    EVALUATION,
    OPTIMIZER,
    REWARD,
    RULES,
    Contact,
    PhysicsReport,
    PhysicsRules,
    check_physics,
    feedback_text,
    penetrations,
)
from .support import SupportReport, check_support
from .voxels import VoxelLoss, voxel_loss

__all__ = [
    "EVALUATION",
    "OPTIMIZER",
    "REWARD",
    "RULES",
    "Contact",
    "OptimizeResult",
    "PhysicsReport",
    "PhysicsRules",
    "RoomLayout",
    "SupportReport",
    "VoxelLoss",
    "check_physics",
    "check_support",
    "feedback_text",
    "layout_from_scene",
    "optimize_scene",
    "parse_layout",
    "penetrations",
    "scene_objects",
    "scene_of",
    "voxel_loss",
]
