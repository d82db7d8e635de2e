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

from typing import Any

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

_KINDS = {"fast": FastExecutor, "blender": BlenderExecutor}


def make_executor(kind: str, **options: Any) -> Executor:
    """An executor by name: ``"fast"`` or ``"blender"``; ``options`` go to its constructor.

    Raises:
        ValueError: Unknown kind.
        BlenderUnavailable: ``"blender"`` without a usable Blender.
    """
    try:
        cls = _KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown executor {kind!r}; choose one of {sorted(_KINDS)}") from None
    return cls(**options)
