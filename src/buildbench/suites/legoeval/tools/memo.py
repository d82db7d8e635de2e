"""Rendered views kept for the life of one :class:`~.context.ToolContext`.

An evaluation asks for the same view many times: every constraint of a house may want its
top-down scene, a multi-view call for ``["sofa", "lamp"]`` and a later one for ``["sofa"]``
draw the sofa alike, and the original-compatible mode renders each item of a list alone. A
context's scene is settled for the context's life (its :class:`~.context.SceneIndex` is built
once from it, and the pipeline's ``ToolCache`` already reuses whole answers per scene), so a
view is drawn once per context and its PNG bytes (immutable) are handed out again.

The memo also keeps the scene's geometry (boxes and floor slabs, what each view is drawn
from: :func:`buildbench.scenes.views.settled.settled_scene`), so even a view not drawn before
does not rebuild it. Both belong to one scene object: handed another (a context whose
``scene`` was replaced), the memo starts empty.

The memo is bounded by the bytes it holds, dropping the least recently used views first, and
safe to share between the worker threads a tool plan runs its tools in: two threads asking
for one view at once may both draw it, and both get equal bytes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

#: Default bound on the PNG bytes one context keeps (at 1200 px a view is a few hundred kB).
DEFAULT_BUDGET_BYTES = 48 * 1024 * 1024

V = TypeVar("V", bytes, Mapping[str, bytes])


def freeze(value: Any) -> Hashable:
    """A hashable stand-in for a view's arguments (lists and tuples become tagged tuples, so
    that ``["a"]`` and ``("a",)`` stay distinct keys)."""
    if isinstance(value, list | tuple):
        return (type(value).__name__, *(freeze(v) for v in value))
    if isinstance(value, dict):
        return ("dict", *((freeze(k), freeze(v)) for k, v in value.items()))
    hash(value)  # an unhashable argument is a programming error here, not a cache miss
    return (type(value).__name__, value)


def _copy(value: bytes | Mapping[str, bytes]) -> bytes | Mapping[str, bytes]:
    """Bytes as they are (immutable); a mapping of views as a new dict, so a caller that
    alters what it got cannot alter what the memo keeps."""
    return value if isinstance(value, bytes) else dict(value)


def _size(value: bytes | Mapping[str, bytes]) -> int:
    return len(value) if isinstance(value, bytes) else sum(len(v) for v in value.values())


class ViewMemo:
    """Views by key (see :meth:`get`), least recently used dropped past ``budget_bytes``."""

    def __init__(self, budget_bytes: int = DEFAULT_BUDGET_BYTES) -> None:
        self.budget_bytes = budget_bytes
        self._scene: object | None = None
        self._views: OrderedDict[Hashable, bytes | Mapping[str, bytes]] = OrderedDict()
        self._geometries: dict[Any, Any] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def _of(self, scene: object) -> None:
        # under the lock: forget what was drawn of another scene object
        if scene is not self._scene:
            self._scene, self._views, self._geometries, self._bytes = scene, OrderedDict(), {}, 0

    def get(self, scene: object, key: Hashable, draw: Callable[[dict[Any, Any]], V]) -> V:
        """The view of ``scene`` under ``key``, drawn by ``draw(geometries)`` the first time
        (``geometries``: where the scene's geometry is kept, for ``settled_scene``). An
        exception from ``draw`` propagates and nothing is kept (the next call draws again)."""
        with self._lock:
            self._of(scene)
            geometries = self._geometries
            if key in self._views:
                self._views.move_to_end(key)
                self.hits += 1
                return _copy(self._views[key])  # type: ignore[return-value]
            self.misses += 1
        value = draw(geometries)
        size = _size(value)
        with self._lock:
            if scene is self._scene and key not in self._views and size <= self.budget_bytes:
                self._views[key] = value
                self._bytes += size
                while self._bytes > self.budget_bytes:
                    _, dropped = self._views.popitem(last=False)
                    self._bytes -= _size(dropped)
        return _copy(value)  # type: ignore[return-value]

    def __len__(self) -> int:
        return len(self._views)
