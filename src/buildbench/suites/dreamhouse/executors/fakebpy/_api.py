"""The ``bpy`` entry points: ``bpy.data`` lists, ``bpy.context``, ``bpy.ops`` operators.

Every operator ends with a depsgraph evaluation (as measured in Blender: world matrices
are fresh after any ``bpy.ops`` call) and returns ``{'FINISHED'}`` or ``{'CANCELLED'}``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

from buildbench.suites.dreamhouse.executors.fakebpy._collections import Collection
from buildbench.suites.dreamhouse.executors.fakebpy._errors import public_names, unsupported
from buildbench.suites.dreamhouse.executors.fakebpy._names import NameRegistry
from buildbench.suites.dreamhouse.executors.fakebpy._state import State
from buildbench.suites.dreamhouse.executors.fakebpy._types import Mesh, Object, _Strict
from buildbench.suites.dreamhouse.executors.fakebpy.mathutils import euler_xyz_to_rows

FINISHED = {"FINISHED"}
CANCELLED = {"CANCELLED"}


# -- bpy.data --------------------------------------------------------------------------
class DataList(_Strict):
    """One ``bpy.data`` list (objects, meshes, collections) in Blender's name order."""

    def __init__(self, state: State, registry: NameRegistry, api_name: str) -> None:
        """A view of ``registry``."""
        self._state, self._registry, self._api_name = state, registry, api_name

    def __iter__(self) -> Iterator[Any]:
        return iter(self._registry)

    def __len__(self) -> int:
        return len(self._registry)

    def __contains__(self, key: Any) -> bool:
        return key in self._registry.by_name if isinstance(key, str) else key in list(self._registry)

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, int):
            return self._registry.at(key)
        try:
            return self._registry.by_name[key]
        except KeyError:
            raise KeyError(f'bpy_prop_collection[key]: key "{key}" not found') from None

    def get(self, key: str, default: Any = None) -> Any:
        """The ID named ``key`` or ``default``."""
        return self._registry.by_name.get(key, default)

    def keys(self) -> list[str]:
        """Names in list order."""
        return [i.name for i in self._registry]

    def values(self) -> list[Any]:
        """IDs in list order."""
        return list(self._registry)

    def items(self) -> list[tuple[str, Any]]:
        """(name, ID) pairs in list order."""
        return [(i.name, i) for i in self._registry]


class DataObjects(DataList):
    """``bpy.data.objects``."""

    def new(self, name: str, object_data: Mesh | None) -> Object:
        """A new object (not linked to any collection) using ``object_data`` (a mesh or None)."""
        if object_data is not None and not isinstance(object_data, Mesh):
            raise unsupported(
                f"bpy.data.objects.new() with {type(object_data).__name__} data", ["Mesh", "None"]
            )
        return Object(self._state, name, object_data)

    def remove(
        self, obj: Object, do_unlink: bool = True, do_id_user: bool = True, do_ui_user: bool = True
    ) -> None:
        """Delete ``obj`` from the file."""
        if not isinstance(obj, Object) or self._registry.by_name.get(obj.name) is not obj:
            raise ReferenceError("BlendDataObjects.remove(): object is not in bpy.data.objects")
        self._state.remove_object(obj)


class DataMeshes(DataList):
    """``bpy.data.meshes``."""

    def new(self, name: str) -> Mesh:
        """A new empty mesh."""
        return Mesh(self._state, name)

    def remove(
        self, mesh: Mesh, do_unlink: bool = True, do_id_user: bool = True, do_ui_user: bool = True
    ) -> None:
        """Delete an unused mesh."""
        if mesh.users:
            raise unsupported(
                f"bpy.data.meshes.remove() of mesh '{mesh.name}' still used by {mesh.users} object(s)"
            )
        self._registry.discard(mesh, mesh.name)


class DataCollections(DataList):
    """``bpy.data.collections``."""

    def new(self, name: str) -> Collection:
        """A new collection (not yet linked to the scene)."""
        return Collection(self._state, name)

    def remove(
        self, coll: Collection, do_unlink: bool = True, do_id_user: bool = True, do_ui_user: bool = True
    ) -> None:
        """Delete ``coll``: unlink it from its parents; its objects stay in ``bpy.data``."""
        state = self._state
        for parent in [state.scene_collection, *state.collections]:
            if coll in parent.children._list:
                parent.children._list.remove(coll)
        for obj in list(coll.objects._list):
            coll.objects.unlink(obj)
        self._registry.discard(coll, coll.name)


class BlendData(_Strict):
    """``bpy.data``."""

    _api_name = "bpy.data"

    def __init__(self, state: State) -> None:
        """Lists over ``state``."""
        self.objects = DataObjects(state, state.objects, "bpy.data.objects")
        self.meshes = DataMeshes(state, state.meshes, "bpy.data.meshes")
        self.collections = DataCollections(state, state.collections, "bpy.data.collections")

    _instance_attrs = ("objects", "meshes", "collections")


# -- bpy.context -----------------------------------------------------------------------
class LayerCollection(_Strict):
    """A collection as seen from the view layer (``children[name]``, ``collection``)."""

    _api_name = "bpy.types.LayerCollection"

    def __init__(self, collection: Collection) -> None:
        """Wrap ``collection``."""
        self._coll = collection

    @property
    def collection(self) -> Collection:
        """The wrapped collection."""
        return self._coll

    @property
    def name(self) -> str:
        """The collection's name."""
        return self._coll.name

    @property
    def children(self) -> dict[str, LayerCollection]:
        """Child layer collections by name."""
        return {c.name: LayerCollection(c) for c in self._coll.children._list}


class ViewLayerObjects(_Strict):
    """``view_layer.objects``: the objects in the scene, with the active one."""

    _api_name = "bpy.types.LayerObjects"

    def __init__(self, state: State) -> None:
        """A view over ``state``."""
        self._state = state

    @property
    def active(self) -> Object | None:
        """The active object."""
        return self._state.active

    @active.setter
    def active(self, obj: Object | None) -> None:
        self._state.active = obj

    def __iter__(self) -> Iterator[Object]:
        return iter(self._state.view_layer_objects())

    def __len__(self) -> int:
        return len(self._state.view_layer_objects())

    def get(self, key: str, default: Any = None) -> Any:
        """The scene object named ``key`` or ``default``."""
        return next((o for o in self._state.view_layer_objects() if o.name == key), default)


class ViewLayer(_Strict):
    """``bpy.context.view_layer``."""

    _api_name = "bpy.types.ViewLayer"
    name = "ViewLayer"

    def __init__(self, state: State) -> None:
        """A view layer over ``state``."""
        self._state = state
        self._objects = ViewLayerObjects(state)

    @property
    def objects(self) -> ViewLayerObjects:
        """Objects of the view layer."""
        return self._objects

    @property
    def layer_collection(self) -> LayerCollection:
        """The scene's master collection as a layer collection."""
        return LayerCollection(self._state.scene_collection)

    @property
    def active_layer_collection(self) -> LayerCollection:
        """Where new objects are linked."""
        return LayerCollection(self._state.link_target())

    @active_layer_collection.setter
    def active_layer_collection(self, value: LayerCollection) -> None:
        if not isinstance(value, LayerCollection):
            raise TypeError("ViewLayer.active_layer_collection expects a LayerCollection")
        self._state.active_collection = value.collection

    def update(self) -> None:
        """Evaluate the depsgraph: world matrices become fresh."""
        self._state.evaluate()


class Scene(_Strict):
    """``bpy.context.scene``."""

    _api_name = "bpy.types.Scene"
    name = "Scene"

    def __init__(self, state: State) -> None:
        """The scene over ``state``."""
        self._state = state

    @property
    def collection(self) -> Collection:
        """The master collection."""
        return self._state.scene_collection

    @property
    def objects(self) -> list[Object]:
        """Objects in the scene (view-layer order)."""
        return self._state.view_layer_objects()


class Depsgraph(_Strict):
    """What ``evaluated_depsgraph_get()`` returns: only ``update()``."""

    _api_name = "bpy.types.Depsgraph"

    def __init__(self, state: State) -> None:
        """Bound to ``state``."""
        self._state = state

    def update(self) -> None:
        """Evaluate again."""
        self._state.evaluate()


class Context(_Strict):
    """``bpy.context``."""

    _api_name = "bpy.context"

    def __init__(self, state: State) -> None:
        """Context over ``state``."""
        self._state = state
        self._view_layer = ViewLayer(state)
        self._scene = Scene(state)

    @property
    def object(self) -> Object | None:
        """The active object."""
        return self._state.active

    active_object = object

    @property
    def selected_objects(self) -> list[Object]:
        """Selected objects."""
        return list(self._state.selected)

    @property
    def view_layer(self) -> ViewLayer:
        """The view layer."""
        return self._view_layer

    @property
    def scene(self) -> Scene:
        """The scene."""
        return self._scene

    @property
    def collection(self) -> Collection:
        """The active collection."""
        return self._state.link_target()

    def evaluated_depsgraph_get(self) -> Depsgraph:
        """Evaluate and return the depsgraph."""
        self._state.evaluate()
        return Depsgraph(self._state)


# -- bpy.ops ---------------------------------------------------------------------------
def _operator(path: str, fn: Callable[..., set[str]], state: State) -> Callable[..., set[str]]:
    params = inspect.signature(fn).parameters

    def call(*args: Any, **kwargs: Any) -> set[str]:
        if args:
            raise ValueError(f"{path}: positional arguments are only for execution context, not modelled")
        for key in kwargs:
            if key not in params:
                raise TypeError(f'Converting py args to operator properties:: keyword "{key}" unrecognized')
        result = fn(**kwargs)
        state.evaluate()
        return result

    call.__name__ = path.rsplit(".", 1)[-1]
    call.__doc__ = fn.__doc__
    return call


class OpsModule(_Strict):
    """One ``bpy.ops.<module>`` namespace: the modelled operators only."""

    def __init__(self, path: str, ops: dict[str, Callable[..., set[str]]]) -> None:
        """Operators under ``path`` (e.g. ``bpy.ops.mesh``)."""
        self._api_name = path
        self._ops = ops

    def __getattr__(self, name: str) -> Any:
        ops = self.__dict__.get("_ops", {})
        if name in ops:
            return ops[name]
        raise unsupported(
            f"{self.__dict__.get('_api_name', 'bpy.ops')}.{name}", [f"{self._api_name}.{k}" for k in ops]
        )


class Ops(_Strict):
    """``bpy.ops``."""

    _api_name = "bpy.ops"

    def __init__(self, state: State) -> None:
        """Operators bound to ``state``."""
        self._modules = {
            "mesh": OpsModule(
                "bpy.ops.mesh",
                {"primitive_cube_add": _operator("bpy.ops.mesh.primitive_cube_add", _cube_add(state), state)},
            ),
            "object": OpsModule(
                "bpy.ops.object",
                {
                    name: _operator(f"bpy.ops.object.{name}", fn, state)
                    for name, fn in (
                        ("select_all", _select_all(state)),
                        ("delete", _delete(state)),
                        ("transform_apply", _transform_apply(state)),
                    )
                },
            ),
        }

    def __getattr__(self, name: str) -> Any:
        modules = self.__dict__.get("_modules", {})
        if name in modules:
            return modules[name]
        supported = [f"bpy.ops.{m}.{op}" for m, mod in modules.items() for op in mod._ops]
        raise unsupported(f"bpy.ops.{name}", supported)


def _cube_add(state: State) -> Callable[..., set[str]]:
    def primitive_cube_add(
        size: float = 2.0,
        calc_uvs: bool = True,
        enter_editmode: bool = False,
        align: str = "WORLD",
        location: Any = (0.0, 0.0, 0.0),
        rotation: Any = (0.0, 0.0, 0.0),
        scale: Any = None,
    ) -> set[str]:
        """A cube of edge ``size`` (metres) with ``scale`` baked into the mesh, placed and rotated as an object."""
        if enter_editmode:
            raise unsupported("bpy.ops.mesh.primitive_cube_add(enter_editmode=True)")
        if align != "WORLD":
            raise unsupported(f"bpy.ops.mesh.primitive_cube_add(align={align!r})", ["'WORLD'"])
        sx, sy, sz = (1.0, 1.0, 1.0) if scale is None else _vec3(scale, "scale")
        h = float(size) / 2.0
        coords = [
            c
            for x in (-h * sx, h * sx)
            for y in (-h * sy, h * sy)
            for z in (-h * sz, h * sz)
            for c in (x, y, z)
        ]
        obj = Object(state, "Cube", Mesh(state, "Cube", coords))
        obj._loc[:] = _vec3(location, "location")
        obj._rot[:] = _vec3(rotation, "rotation")
        obj._touch()
        state.link_target().objects.link(obj)
        for other in list(state.selected):
            state.selected.pop(other)
        state.selected[obj] = None
        state.active = obj
        return FINISHED

    return primitive_cube_add


def _select_all(state: State) -> Callable[..., set[str]]:
    def select_all(action: str = "TOGGLE") -> set[str]:
        """Select, deselect, invert or toggle every object in the view layer."""
        objs = state.scene_objects()
        if action == "TOGGLE":
            action = "DESELECT" if state.selected else "SELECT"
        if action == "SELECT":
            for o in objs:
                state.selected[o] = None
        elif action == "DESELECT":
            state.selected.clear()
        elif action == "INVERT":
            for o in objs:
                state.select(o, o not in state.selected)
        else:
            raise TypeError(
                f"bpy.ops.object.select_all(): enum \"{action}\" not found in ('TOGGLE', 'SELECT', 'DESELECT', 'INVERT')"
            )
        return FINISHED

    return select_all


def _delete(state: State) -> Callable[..., set[str]]:
    def delete(use_global: bool = False, confirm: bool = True) -> set[str]:
        """Delete the selected objects."""
        doomed = list(state.selected)
        if not doomed:
            return CANCELLED
        for obj in doomed:
            state.remove_object(obj)
        return FINISHED

    return delete


def _transform_apply(state: State) -> Callable[..., set[str]]:
    def transform_apply(
        location: bool = True,
        rotation: bool = True,
        scale: bool = True,
        properties: bool = True,
        isolate_users: bool = False,
    ) -> set[str]:
        """Bake the chosen parts of each selected object's transform into its mesh."""
        targets = [o for o in state.selected if o._mesh is not None]
        if not targets:
            return CANCELLED
        for obj in targets:
            if obj._mesh is not None and obj._mesh.users > 1:
                raise RuntimeError(
                    f'Error: Cannot apply to a multi user: Object "{obj.name}", Mesh "{obj._mesh.name}", aborting\n'
                )
        for obj in targets:
            _apply_one(obj, location, rotation, scale)
        return FINISHED

    return transform_apply


def _apply_one(obj: Object, location: bool, rotation: bool, scale: bool) -> None:
    """Bake ``R @ S`` of the applied parts (plus the location) into the mesh.

    Applying the rotation but not the scale bakes ``S^-1 @ R @ S`` so that the kept
    scale leaves the member looking the same (measured in Blender 5.0.1).
    """
    obj_s = list(obj._scale._d)
    s = obj_s if scale else [1.0, 1.0, 1.0]
    r = euler_xyz_to_rows(obj._rot._d) if rotation else [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    if rotation and not scale and all(v != 0.0 for v in obj_s):
        r = [[obj_s[j] * r[i][j] / obj_s[i] for j in range(3)] for i in range(3)]
    t = list(obj._loc._d) if location else [0.0, 0.0, 0.0]
    rows = [[r[i][j] * s[j] for j in range(3)] + [t[i]] for i in range(3)] + [[0.0, 0.0, 0.0, 1.0]]
    assert obj._mesh is not None
    obj._mesh.transform(rows)
    if location:
        obj._loc[:] = (0.0, 0.0, 0.0)
    if rotation:
        obj._rot[:] = (0.0, 0.0, 0.0)
    if scale:
        obj._scale[:] = (1.0, 1.0, 1.0)
    obj._touch()


def _vec3(value: Any, what: str) -> list[float]:
    try:
        out = [float(v) for v in value]
    except TypeError:
        raise TypeError(f"{what}: expected a sequence of 3 numbers, got {type(value).__name__}") from None
    if len(out) != 3:
        raise ValueError(f"{what}: expected 3 values, got {len(out)}")
    return out


def supported_api() -> list[str]:
    """Names of the modelled entry points, for documentation and error messages."""
    return sorted(
        [f"bpy.data.{n}" for n in ("objects", "meshes", "collections")]
        + [f"bpy.context.{n}" for n in public_names(Context)]
        + ["bpy.ops.mesh.primitive_cube_add"]
        + [f"bpy.ops.object.{n}" for n in ("select_all", "delete", "transform_apply")]
    )
