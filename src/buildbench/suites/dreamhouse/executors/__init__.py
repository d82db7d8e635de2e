"""Executors for DreamHouse's Blender Python actions, behind one interface.

- ``fast``: our pure-Python ``bpy``/``mathutils`` (`fakebpy`); 1,500 cubes in well under a second.
- ``blender``: real Blender (the ``bpy`` wheel in ``.venv-blender``, or a binary).

Both run agent code in `buildbench.sandbox` (never in the harness process), keep the
scene across runs until `Executor.reset`, save it whole and open it again in a fresh process
(`Executor.save_scene`, `Executor.load_scene`), and export members the way the released
harness's ``helpers/blender_export.py`` does, so a conformance corpus can hold them to
identical results.

Example:
    >>> with make_executor("fast") as ex:
    ...     r = ex.run("import bpy\\nbpy.data.objects.remove(bpy.data.objects['Cube'])")
    ...     r.status, r.members
    ('ok', [])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from buildbench.suites.dreamhouse.executors._base import ExecResult, ExecStatus, Executor
    from buildbench.suites.dreamhouse.executors.blender import (
        BlenderExecutor,
        BlenderUnavailable,
        find_blender_python,
    )
    from buildbench.suites.dreamhouse.executors.fast import FastExecutor

__all__ = [
    "BlenderExecutor",
    "BlenderUnavailable",
    "ExecResult",
    "ExecStatus",
    "Executor",
    "FastExecutor",
    "find_blender_python",
    "make_executor",
]

# The sandboxed child of every executor imports this package (its setup hook lives here), and
# a fresh process is what the env starts after each failed script: nothing is imported eagerly,
# so the child loads neither the harness side (sandbox client, numpy, the model) nor Blender's.
_LAZY = {
    "ExecResult": "_base", "ExecStatus": "_base", "Executor": "_base", "BlenderExecutor": "blender",
    "BlenderUnavailable": "blender", "find_blender_python": "blender", "FastExecutor": "fast",
}
_KINDS = {"fast": "FastExecutor", "blender": "BlenderExecutor"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def make_executor(kind: str, **options: Any) -> Executor:
    """An executor by name: ``"fast"`` or ``"blender"``; ``options`` go to its constructor.

    Raises:
        ValueError: Unknown kind.
        BlenderUnavailable: ``"blender"`` without a usable Blender.
    """
    try:
        cls = __getattr__(_KINDS[kind])
    except KeyError:
        raise ValueError(f"unknown executor {kind!r}; choose one of {sorted(_KINDS)}") from None
    executor: Executor = cls(**options)
    return executor
