"""Collections of the fake ``bpy``: ``Collection`` with its ``objects`` and ``children`` lists.

Link and unlink errors carry Blender's own messages (measured on ``bpy`` 5.0.1).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from buildbench.suites.dreamhouse.executors.fakebpy._types import ID, Object, _Strict

if TYPE_CHECKING:
    from buildbench.suites.dreamhouse.executors.fakebpy._state import State


class CollectionObjects(_Strict):
    """``Collection.objects``: the objects linked directly to a collection, in link order."""

    _api_name = "bpy.types.CollectionObjects"

    def __init__(self, owner: Collection) -> None:
        """Objects of ``owner``."""
        self._owner = owner
        self._list: list[Object] = []
        self._members: set[Object] = set()

    def __iter__(self) -> Iterator[Object]:
        return iter(list(self._list))

    def __len__(self) -> int:
        return len(self._list)

    def __contains__(self, item: Any) -> bool:
        return any(o._name == item for o in self._list) if isinstance(item, str) else item in self._members

    def __getitem__(self, key: int | str) -> Object:
        if isinstance(key, int):
            return self._list[key]
        for o in self._list:
            if o._name == key:
                return o
        raise KeyError(f'bpy_prop_collection[key]: key "{key}" not found')

    def get(self, key: str, default: Any = None) -> Any:
        """The object named ``key`` or ``default``."""
        return next((o for o in self._list if o._name == key), default)

    def keys(self) -> list[str]:
        """Object names."""
        return [o._name for o in self._list]

    def link(self, obj: Object) -> None:
        """Link ``obj`` to this collection."""
        if not isinstance(obj, Object):
            raise TypeError(f"CollectionObjects.link(): expected an Object, got {type(obj).__name__}")
        if obj in self._members:
            raise RuntimeError(f"Error: Object '{obj._name}' already in collection '{self._owner._name}'\n")
        self._list.append(obj)
        self._members.add(obj)
        obj._collections.append(self._owner)

    def unlink(self, obj: Object) -> None:
        """Unlink ``obj`` from this collection."""
        if obj not in self._members:
            raise RuntimeError(f"Error: Object '{obj._name}' not in collection '{self._owner._name}'\n")
        self._list.remove(obj)
        self._members.discard(obj)
        obj._collections.remove(self._owner)
        obj._state.forget_if_unlinked(obj)


class CollectionChildren(_Strict):
    """``Collection.children``: child collections."""

    _api_name = "bpy.types.CollectionChildren"

    def __init__(self, owner: Collection) -> None:
        """Children of ``owner``."""
        self._owner = owner
        self._list: list[Collection] = []

    def __iter__(self) -> Iterator[Collection]:
        return iter(list(self._list))

    def __len__(self) -> int:
        return len(self._list)

    def __getitem__(self, key: int | str) -> Collection:
        if isinstance(key, int):
            return self._list[key]
        for c in self._list:
            if c._name == key:
                return c
        raise KeyError(f'bpy_prop_collection[key]: key "{key}" not found')

    def get(self, key: str, default: Any = None) -> Any:
        """The child named ``key`` or ``default``."""
        return next((c for c in self._list if c._name == key), default)

    def __contains__(self, item: Any) -> bool:
        return any(c._name == item for c in self._list) if isinstance(item, str) else item in self._list

    def link(self, child: Collection) -> None:
        """Make ``child`` a child collection."""
        if not isinstance(child, Collection):
            raise TypeError(f"CollectionChildren.link(): expected a Collection, got {type(child).__name__}")
        if child in self._list:
            raise RuntimeError(
                f"Error: Collection '{child._name}' already in collection '{self._owner._name}'\n"
            )
        self._list.append(child)

    def unlink(self, child: Collection) -> None:
        """Remove ``child`` from the children."""
        if child not in self._list:
            raise RuntimeError(f"Error: Collection '{child._name}' not in collection '{self._owner._name}'\n")
        self._list.remove(child)


class Collection(ID):
    """A collection of objects and child collections."""

    _registry_attr = "collections"
    _api_name = "bpy.types.Collection"
    _instance_attrs = ("objects", "children")

    def __init__(self, state: State, name: str, *, master: bool = False) -> None:
        """A collection; the scene's master collection is not in ``bpy.data.collections``."""
        if master:
            self.__dict__.update(_state=state, _props={}, _name="Scene Collection")
        else:
            super().__init__(state, name)
        self.objects = CollectionObjects(self)
        self.children = CollectionChildren(self)

    @property
    def all_objects(self) -> list[Object]:
        """Objects of this collection and of all its descendants."""
        seen: dict[int, Object] = {}
        for c in self._state.collection_tree(self):
            for o in c.objects._list:
                seen.setdefault(id(o), o)
        return list(seen.values())
