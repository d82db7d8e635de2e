"""Scene geometry built once while a caller promises the scene does not change.

A :class:`~buildbench.scenes.model.Scene` is a tree of mutable lists, so nothing short of the
caller's word tells that it is unchanged since its geometry was last built. A caller that
draws many views of one scene it does not change (a LEGO-Eval tool context) says so with
:func:`settled_scene` and passes a store it keeps; inside the block
:func:`~buildbench.scenes.views.geometry.scene_geometry` of that scene is built once per set
of arguments. Outside such a block every call builds afresh, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from buildbench.scenes.model import Scene
    from buildbench.scenes.views.geometry import SceneGeometry

#: The scene declared settled in this thread or task, and where its geometry is kept.
_SETTLED: ContextVar[tuple[Scene, MutableMapping[Any, SceneGeometry]] | None] = ContextVar(
    "settled_scene", default=None)


@contextmanager
def settled_scene(scene: Scene, store: MutableMapping[Any, SceneGeometry]) -> Iterator[None]:
    """Within the block the caller promises not to change ``scene``; its geometry is kept in
    ``store`` (pass the same store again to reuse it in a later block)."""
    token = _SETTLED.set((scene, store))
    try:
        yield
    finally:
        _SETTLED.reset(token)


def settled_geometry(scene: Scene, key: Hashable, build: Callable[[], SceneGeometry]) -> SceneGeometry:
    """``build()``, or inside :func:`settled_scene` for this very scene object the geometry
    kept under ``key``. Kept geometry has read-only arrays, so a view that altered them in
    place would fail loudly instead of leaving later views stale."""
    settled = _SETTLED.get()
    if settled is None or settled[0] is not scene:
        return build()
    store = settled[1]
    if key not in store:
        store[key] = _read_only(build())
    return store[key]


def _read_only(geo: SceneGeometry) -> SceneGeometry:
    b = geo.boxes
    for array in (b.centers, b.rotations, b.sizes, b.colors, *(f.vertices_xz for f in geo.floors)):
        array.setflags(write=False)
    return geo
