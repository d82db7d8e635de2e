"""The agent's whole Blender scene as saved after each accepted script, so the executor can get it back.

The released harness keeps the scene in a ``.blend`` file it saves after each script that
ran and reopens for the next: every object persists, members or not (a helper outside the
task's collection, the factory objects the agent deleted), and a failed script leaves the
file as it was. Our executor keeps the scene in its process instead, and saves it the same way
after each accepted script (`Executor.save_scene`, into a folder of the harness the agent's code
cannot reach). When the process's scene is no longer the agent's (a failed script's leftovers, a
lost process), a fresh process opens the saved scene: no script of the agent runs twice, so what
its scripts did besides building (files written or appended in the work folder, random numbers,
the clock) is not done again, and the rebuilt scene is the one the agent saw.

An edit made outside a script (a JSON or tool edit, a restored checkpoint) is a rebuild of the
members, run in place on top of the saved scene: objects that are not members stay as they are,
and members the exporter read from another collection than the task's (its fallback when the
agent named its own) move to the task's, leaving no copy behind. Where the scene cannot be saved
or opened again (the agent put something in it that does not save), the members alone are
rebuilt and the objects that are not members are lost.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any, Literal

import numpy as np

from buildbench.sandbox.lifetime import lock_workdir

from .model import Structure, StructureFormatError
from .scripts import structure_to_bpy

#: Where the executor's scene stands against the agent's: ``synced``; ``edit`` (it holds the saved
#: scene, the pending edit is still to run in place); ``reset`` (the factory scene must be
#: reloaded: a new episode or ``reset_scene``); ``lost`` (a refused script ran there or the process
#: was lost: a fresh process opens the saved scene, as the released harness opens its ``.blend``).
SyncState = Literal["synced", "edit", "reset", "lost"]


class SceneHistory:
    """The last accepted scene as a saved file, plus the members rebuild made since (if any)."""

    def __init__(self, collection: str) -> None:
        self.collection = collection
        #: The scene file saved after the last accepted script; None: the factory scene.
        self.saved: Path | None = None
        #: A members rebuild to run on top of ``saved``: the last edit made outside a script, or
        #: the members alone when the accepted scene could not be saved.
        self.edit: str | None = None
        self.state: SyncState = "reset"
        self._folder: Path | None = None
        self._remove_folder: weakref.finalize | None = None

    def close(self) -> None:
        """Remove the saved scene (the history is not used again)."""
        if self._remove_folder is not None:
            self._remove_folder()
        self._folder = self._remove_folder = self.saved = None

    def reset(self) -> None:
        """The factory scene: nothing made yet."""
        self._forget_saved()
        self.edit, self.state = None, "reset"

    def accepted(self, ex: Any, scene: Structure) -> None:
        """A script ran in the executor ``ex`` and its scene, whose members are ``scene``, was accepted: save it."""
        self._forget_saved()
        self.saved = ex.save_scene(self._snapshot_folder())
        self.edit = None if self.saved is not None else structure_to_bpy(scene, self.collection, clear=True)
        self.state = "synced"

    def rejected(self) -> None:
        """A script ran (or failed) and its scene was not accepted: the executor's scene is not the agent's."""
        self.state = "lost"

    def edited(self, scene: Structure) -> None:
        """``scene``'s members replace the scene's outside a script: rebuilt before the next script."""
        # A rebuild clears what the one before made: the last one is all that is kept.
        self.edit = structure_to_bpy(scene, self.collection, clear=True)
        if self.state == "synced":
            self.state = "edit"

    def sync(self, ex: Any, scene: Structure) -> None:
        """Make the executor ``ex``'s scene the agent's, whose members are ``scene``.

        Raises:
            RuntimeError: Not even the members alone can be rebuilt.
        """
        if self.state in ("synced", "edit") and not ex.running():
            self.state = "lost"  # its process was killed between steps: a new one starts from nothing
        if self.state == "edit":
            self.state = "synced" if same_members(ex.run(self.edit), scene) else "lost"
        if self.state == "synced":
            return
        fresh = self.state == "lost"
        for _ in range(2):
            if fresh:
                ex.restart()
            else:
                ex.reset()
            if self._restored(ex, scene):
                self.state = "synced"
                return
            # The process may be what failed (an earlier script patched bpy): a fresh one undoes it.
            fresh = True
        # The members alone, on a factory scene: its own objects must not rename members (its
        # 'Cube' would turn the agent's 'Cube' into 'Cube.001' in the feedback).
        self._forget_saved()
        self.edit = structure_to_bpy(scene, self.collection, clear=True)
        ex.reset()
        rebuilt = ex.run(self.edit)
        if not rebuilt.ok:
            ex.restart()
            rebuilt = ex.run(self.edit)
        if not rebuilt.ok:
            raise RuntimeError(f"could not rebuild the scene in the executor: {rebuilt.error}")
        self.state = "synced"

    def _restored(self, ex: Any, scene: Structure) -> bool:
        """Open the saved scene in ``ex``'s factory scene and run the edit: whether that gave ``scene``."""
        result = ex.load_scene(self.saved) if self.saved is not None else None
        if result is not None and not result.ok:
            return False
        if self.edit is not None:
            result = ex.run(self.edit)
        return same_members(result, scene)

    def _snapshot_folder(self) -> Path:
        if self._folder is None:
            # A sandbox work folder's prefix and lock: what a killed run leaves is removed by the next
            # run's `clean_stale_workdirs`, as its work folders are.
            self._folder = Path(tempfile.mkdtemp(prefix="buildbench-sandbox-dreamhouse-scene-"))
            self._remove_folder = weakref.finalize(self, _remove, self._folder, lock_workdir(self._folder))
        return self._folder

    def _forget_saved(self) -> None:
        if self.saved is not None:
            self.saved.unlink(missing_ok=True)
            self.saved = None


def _remove(folder: Path, lock: int) -> None:
    os.close(lock)
    shutil.rmtree(folder, ignore_errors=True)


def same_members(result: Any, scene: Structure) -> bool:
    """Whether a run's exported members are ``scene``'s (no run: whether ``scene`` is empty)."""
    if result is None:
        return len(scene) == 0
    if not result.ok:
        return False
    try:
        got = result.structure()
    except StructureFormatError:
        return False
    return got.names == scene.names and np.array_equal(got.sizes_m, scene.sizes_m, equal_nan=True) and \
        np.array_equal(got.matrices, scene.matrices, equal_nan=True)
