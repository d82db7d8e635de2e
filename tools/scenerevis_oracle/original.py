"""Load the pure-Python parts of the released SceneReVis code, unmodified.

``utils/scene_editor.py`` and ``utils/RL_utils.py`` import as they are (numpy, scipy,
shapely, trimesh, python-fcl, Pillow). ``infer.py`` and ``script/RL/scene_editing_interaction.py``
import hosted-model clients (ms-swift, Azure OpenAI, verl) at module level, so the few
functions used here are cut out of their source with :mod:`ast` and executed alone, the
methods bound to a small stand-in for the interaction object (its per-instance dict and a
logger): their bodies run exactly as released.
"""

from __future__ import annotations

import ast
import asyncio
import json
import logging
import re
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np


def _class_scope(tree: ast.Module, class_name: str | None) -> list[ast.stmt]:
    if class_name is None:
        return tree.body
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name).body


def _load_function(path: Path, name: str, namespace: dict[str, Any], class_name: str | None = None) -> Any:
    """The function (or method, unbound, decorators dropped) ``name`` of ``path``, compiled from
    its own syntax tree so its body is exactly the released one."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    node = next(n for n in _class_scope(tree, class_name)
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name)
    node.decorator_list = []
    exec(compile(ast.Module(body=[node], type_ignores=[]), f"{path}:{name}", "exec"), namespace)
    return namespace[name]


def _term_chains(path: Path) -> Any:
    """The four ``if`` chains of ``calculate_score`` that turn the physics metrics into R_col,
    R_oob, R_pen and R_oobvol (written inline there, so cut out by their tested variable)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    method = next(n for n in _class_scope(tree, "SceneEditingInteraction")
                  if isinstance(n, ast.AsyncFunctionDef) and n.name == "calculate_score")
    chains: list[ast.stmt] = []
    for variable in ("collision_rate", "oob_rate", "total_penetration_depth", "total_oob_volume"):
        chains.append(next(n for n in ast.walk(method) if isinstance(n, ast.If) and isinstance(n.test, ast.Compare)
                           and isinstance(n.test.left, ast.Name) and n.test.left.id == variable))
    return compile(ast.Module(body=chains, type_ignores=[]), f"{path}:calculate_score", "exec")


class Original:
    """The released functions, from a checkout at ``root`` (``utils/``, ``infer.py``, ``script/RL/``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        sys.path.insert(0, str(root / "utils"))
        import RL_utils  # the released module
        import scene_editor

        self.rl_utils = RL_utils
        self.scene_editor = scene_editor
        namespace: dict[str, Any] = {"re": re, "json": json, "np": np, "Any": Any, "Dict": dict, "List": list,
                                     "Tuple": tuple, "Optional": Any, "sys": sys, "asyncio": asyncio}
        self.extract_tool_calls = _load_function(root / "infer.py", "extract_tool_calls_from_response", namespace)
        rl = root / "script" / "RL" / "scene_editing_interaction.py"
        cls = "SceneEditingInteraction"
        # No judge model is configured on the stand-in, so the support classifier's model call
        # fails inside its own try and it falls back to "floor", as the release does offline.
        self.interaction = types.SimpleNamespace(_instance_dict={}, logger=logging.getLogger("srv-oracle"),
                                                 support_type_cache={}, verbose=False)
        for method in ("_calculate_format_reward", "_check_room_shape_reward", "_check_room_type_reward",
                       "_get_room_boundaries", "_find_support_surfaces", "_classify_object_support_type",
                       "_calculate_support_reward"):
            fn = _load_function(rl, method, namespace, cls)
            setattr(self.interaction, method, types.MethodType(fn, self.interaction))
        self.extract_create_scene = _load_function(rl, "extract_create_scene_from_response", namespace, cls)
        self._term_code = _term_chains(rl)

    # --- the RL environment's pieces ----------------------------------------------------
    def to_grouped(self, flat: dict[str, Any]) -> dict[str, Any]:
        return self.rl_utils.convert_flat_to_grouped(flat)  # type: ignore[no-any-return]

    def to_flat(self, grouped: dict[str, Any]) -> dict[str, Any]:
        return self.rl_utils.convert_grouped_to_flat(grouped)  # type: ignore[no-any-return]

    def apply(self, grouped: dict[str, Any], calls: Any) -> dict[str, Any]:
        """``SceneEditor.edit_scene`` without retrieval, as ``edit_and_render_scene`` runs it."""
        editor = self.rl_utils.SceneEditor.__new__(self.rl_utils.SceneEditor)
        editor.verbose = False
        editor.use_objaverse = True
        editor.asset_retrieval_module = None
        editor._import_scene_editor()
        return editor.edit_scene(grouped, calls, retrieve_assets=False)  # type: ignore[no-any-return]

    def format_reward(self, reply: str, current_grouped: dict[str, Any], turn: int,
                      requirement: str = "") -> float:
        """``_calculate_format_reward`` with ``current_scene`` = ``current_grouped``."""
        self.interaction._instance_dict["i"] = {"current_scene": current_grouped, "user_requirement": requirement,
                                                "format_conversion_success": True}
        messages = [{"role": "assistant", "content": reply}]
        return float(self.interaction._calculate_format_reward(messages, turn, "i"))

    def support_reward(self, grouped: dict[str, Any]) -> float:
        """R_support of a grouped scene (``_calculate_support_reward``, keyword classes, else floor)."""
        return float(asyncio.run(self.interaction._calculate_support_reward(grouped)))

    def physics_terms(self, metrics: dict[str, Any]) -> dict[str, float]:
        """R_col, R_oob, R_pen, R_oobvol of ``metrics`` as ``calculate_score`` computes them."""
        scope: dict[str, Any] = {
            "collision_rate": metrics["collision_rate"], "oob_rate": metrics["out_of_bounds_rate"],
            "total_penetration_depth": metrics.get("total_penetration_depth", 0.0),
            "total_oob_volume": metrics.get("total_oob_volume", 0.0), "self": self.interaction}
        exec(self._term_code, scope)
        return {"collision_rate": scope["collision_reward"], "oob_rate": scope["oob_reward"],
                "penetration_depth": scope["penetration_reward"], "oob_volume": scope["oob_volume_reward"]}

    def physics(self, models_dir: Path) -> Any:
        return self.rl_utils.TrimeshPhysicsMetrics(models_base_path=str(models_dir))

    def feedback(self, metrics: dict[str, Any]) -> str:
        return self.rl_utils.generate_physics_feedback(metrics)  # type: ignore[no-any-return]
