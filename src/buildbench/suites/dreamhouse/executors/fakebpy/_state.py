"""The whole scene state of one fake Blender session, starting as Blender's factory scene."""

from __future__ import annotations

from collections.abc import Iterator

from buildbench.suites.dreamhouse.executors.fakebpy._collections import Collection
from buildbench.suites.dreamhouse.executors.fakebpy._names import NameRegistry
from buildbench.suites.dreamhouse.executors.fakebpy._types import Mesh, Object

# Blender's default cube: 2 m, centred on the origin.
CUBE_COORDS = tuple(c for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0) for c in (x, y, z))


class State:
    """Registries, the scene's collection tree, selection, the active object, stale matrices.

    The start matches ``bpy`` 5.0.1's factory scene: collection ``Collection`` holding the
    mesh ``Cube`` and the non-mesh objects ``Light`` and ``Camera`` (as empties here;
    only their names and types are observable to construction scripts); ``Cube`` is
    active and selected.
    """

    def __init__(self) -> None:
        """A fresh factory scene."""
        self.objects = NameRegistry()
        self.meshes = NameRegistry()
        self.collections = NameRegistry()
        self.selected: dict[Object, None] = {}
        self.active: Object | None = None
        self.dirty: list[Object] = []
        self.scene_collection = Collection(self, "Scene Collection", master=True)
        default = Collection(self, "Collection")
        self.scene_collection.children.link(default)
        self.active_collection: Collection = default
        cube = Object(self, "Cube", Mesh(self, "Cube", CUBE_COORDS))
        light, camera = Object(self, "Light", None), Object(self, "Camera", None)
        light.location = (4.076245307922363, 1.0054539442062378, 5.903861999511719)
        camera.location = (7.358891487121582, -6.925790786743164, 4.958309173583984)
        for obj in (cube, light, camera):
            default.objects.link(obj)
        self.evaluate()
        self.select(cube, True)
        self.active = cube

    # -- depsgraph ------------------------------------------------------------------
    def evaluate(self) -> None:
        """Recompute the world matrix of every object changed since the last evaluation."""
        for obj in self.dirty:
            if obj._dirty:
                obj._evaluate()
        self.dirty.clear()

    # -- collection tree ------------------------------------------------------------
    def collection_tree(self, root: Collection) -> Iterator[Collection]:
        """``root`` and its descendants, depth first, each once."""
        seen: set[int] = set()
        stack = [root]
        while stack:
            c = stack.pop()
            if id(c) in seen:
                continue
            seen.add(id(c))
            yield c
            stack.extend(reversed(c.children._list))

    def scene_collections(self) -> list[Collection]:
        """The scene's master collection and every collection linked below it."""
        return list(self.collection_tree(self.scene_collection))

    def in_view_layer(self, obj: Object) -> bool:
        """True when ``obj`` is linked somewhere in the scene's collection tree."""
        if not obj._collections:
            return False
        return any(c in obj._collections for c in self.scene_collections())

    def scene_objects(self) -> list[Object]:
        """Objects in the scene, in ``bpy.data.objects`` order."""
        linked = {id(o) for c in self.scene_collections() for o in c.objects._list}
        return [o for o in self.objects if id(o) in linked]

    def view_layer_objects(self) -> list[Object]:
        """Objects in the scene in link order through the collection tree (the view layer's order)."""
        seen: dict[int, Object] = {}
        for c in self.scene_collections():
            for o in c.objects._list:
                seen.setdefault(id(o), o)
        return list(seen.values())

    def link_target(self) -> Collection:
        """Where new objects go: the active collection if still in the scene, else the master."""
        c = self.active_collection
        return c if c in self.scene_collections() else self.scene_collection

    # -- selection ------------------------------------------------------------------
    def select(self, obj: Object, state: bool) -> None:
        """Add ``obj`` to, or drop it from, the selection."""
        if state:
            self.selected[obj] = None
        else:
            self.selected.pop(obj, None)

    def forget_if_unlinked(self, obj: Object) -> None:
        """An object no longer in the view layer cannot stay selected or active."""
        if not self.in_view_layer(obj):
            self.selected.pop(obj, None)
            if self.active is obj:
                self.active = None

    def remove_object(self, obj: Object) -> None:
        """Delete ``obj``: unlink it everywhere and drop it from ``bpy.data.objects``."""
        for c in list(obj._collections):
            c.objects._list.remove(obj)
            c.objects._members.discard(obj)
        obj._collections.clear()
        self.selected.pop(obj, None)
        if self.active is obj:
            self.active = None
        if obj._mesh is not None:
            obj._mesh._users -= 1
        self.objects.discard(obj, obj._name)
