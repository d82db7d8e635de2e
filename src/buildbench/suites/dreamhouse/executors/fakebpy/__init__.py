"""A fast, pure-Python ``bpy``/``mathutils`` covering what timber-frame construction scripts use.

`install` builds a fresh factory scene and registers modules named ``bpy``,
``bpy.ops``, ``bpy.types`` and ``mathutils`` in ``sys.modules`` so agent code runs
unchanged (it is meant for the sandboxed child, never the harness process). Modelled:

- ``bpy.ops.mesh.primitive_cube_add(size, location, rotation, scale)``;
  ``bpy.ops.object.select_all / delete / transform_apply(location, rotation, scale)``;
- ``bpy.context.object / active_object / selected_objects / collection / scene /
  view_layer`` (``objects.active``, ``update()``, ``active_layer_collection``);
- objects: ``name`` (Blender's ``.001`` rule), ``location``, ``scale``,
  ``rotation_euler`` (XYZ), ``dimensions`` (settable), ``matrix_world``, ``data``,
  ``bound_box``, ``users_collection``, ``select_set/get``, ``copy()``, custom properties;
- ``bpy.data.objects / meshes / collections`` (iteration in Blender's order, ``[name]``,
  ``get``, ``new``, ``remove``), collection ``objects/children.link/unlink``;
- ``mathutils.Vector / Matrix / Euler / Quaternion`` (see `mathutils`).

Anything else raises `UnsupportedAPIError` naming the API, never a silent no-op.
`export_members` writes the scene the way the released harness's exporter does.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from buildbench.suites.dreamhouse.executors.fakebpy import mathutils
from buildbench.suites.dreamhouse.executors.fakebpy._api import BlendData, Context, Ops
from buildbench.suites.dreamhouse.executors.fakebpy._collections import Collection
from buildbench.suites.dreamhouse.executors.fakebpy._errors import UnsupportedAPIError, unsupported
from buildbench.suites.dreamhouse.executors.fakebpy._export import export_members
from buildbench.suites.dreamhouse.executors.fakebpy._state import State
from buildbench.suites.dreamhouse.executors.fakebpy._types import Mesh, Object

__all__ = ["BLENDER_VERSION", "State", "UnsupportedAPIError", "export_members", "install"]

#: The Blender release whose behaviour the fake copies (the pinned ``bpy`` wheel).
BLENDER_VERSION = (5, 0, 1)


def _module(name: str, attrs: dict[str, Any], doc: str) -> types.ModuleType:
    mod = types.ModuleType(name, doc)
    mod.__dict__.update(attrs)
    supported = sorted(k for k in attrs if not k.startswith("_"))

    def __getattr__(attr: str) -> Any:  # noqa: N807 - the module-level hook of PEP 562
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise unsupported(f"{name}.{attr}", [f"{name}.{s}" for s in supported])

    mod.__getattr__ = __getattr__  # type: ignore[method-assign]
    return mod


def install(state: State | None = None) -> State:
    """Register fake ``bpy`` and ``mathutils`` modules over ``state`` (a new factory scene by default).

    Returns:
        The scene state the modules act on.
    """
    state = state or State()
    ops = Ops(state)
    bpy_types = _module(
        "bpy.types", {"Object": Object, "Mesh": Mesh, "Collection": Collection}, "Types of the fake bpy."
    )
    app = types.SimpleNamespace(
        version=BLENDER_VERSION, version_string=".".join(map(str, BLENDER_VERSION)), background=True
    )
    bpy = _module(
        "bpy",
        {"data": BlendData(state), "context": Context(state), "ops": ops, "types": bpy_types, "app": app},
        "Fake bpy (buildbench fast executor).",
    )
    bpy.__path__ = []  # a package, so ``import bpy.ops`` works
    math_mod = _module(
        "mathutils",
        {n: getattr(mathutils, n) for n in ("Vector", "Matrix", "Euler", "Quaternion")},
        "Fake mathutils (buildbench fast executor).",
    )
    sys.modules.update({"bpy": bpy, "bpy.types": bpy_types, "bpy.ops": ops, "mathutils": math_mod})  # type: ignore[dict-item]
    return state
