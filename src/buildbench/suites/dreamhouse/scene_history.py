"""The agent's whole Blender scene as the scripts that make it, so the executor can get it back.

The released harness keeps the scene in a ``.blend`` file it saves after each script that
ran and reopens for the next: every object persists, members or not (a helper outside the
task's collection, the factory objects the agent deleted), and a failed script leaves the
file as it was. Our executor keeps the scene in its process instead, so when that scene is no
longer the agent's (a failed script's leftovers, a lost process) it is made again: the
accepted scripts run again on a factory scene. An edit made outside a script (a JSON or tool
edit, a restored checkpoint) is a rebuild of the members, run in place: objects that are not
members stay as they are, and members the exporter read from another collection than the task's
(its fallback when the agent named its own) move to the task's, leaving no copy behind. Where running the scripts again gives other members (a script that
reads the clock), the members alone are rebuilt and the objects that are not members are lost.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .model import Structure, StructureFormatError
from .scripts import structure_to_bpy


class SceneHistory:
    """The scripts that, run in order on a factory scene, make the agent's scene."""

    def __init__(self, collection: str) -> None:
        self.collection = collection
        self.scripts: list[str] = []
        #: How many of ``scripts`` the executor's scene holds; None: unknown (after a failed
        #: script, a lost process or a reset).
        self.ran: int | None = None
        self._ends_in_edit = False

    def reset(self) -> None:
        """The factory scene: nothing made yet."""
        self.scripts, self.ran, self._ends_in_edit = [], None, False

    def accepted(self, code: str) -> None:
        """``code`` ran in the executor and its scene was accepted."""
        self.scripts.append(code)
        self.ran, self._ends_in_edit = len(self.scripts), False

    def rejected(self) -> None:
        """A script ran (or failed) and its scene was not accepted: the executor's scene is not the agent's."""
        self.ran = None

    def edited(self, scene: Structure) -> None:
        """``scene``'s members replace the scene's outside a script: rebuilt before the next script."""
        script = structure_to_bpy(scene, self.collection, clear=True)
        if self._ends_in_edit:  # a rebuild clears what the one before made: keep one, not one a step
            self.scripts[-1] = script
            if self.ran == len(self.scripts):
                self.ran -= 1
        else:
            self.scripts.append(script)
        self._ends_in_edit = True

    def sync(self, ex: Any, scene: Structure) -> None:
        """Make the executor ``ex``'s scene the agent's, whose members are ``scene``.

        Raises:
            RuntimeError: Not even the members alone can be rebuilt.
        """
        if self.ran is not None and self.ran < len(self.scripts):
            results = [ex.run(script) for script in self.scripts[self.ran:]]
            ok = all(r.ok for r in results) and same_members(results[-1], scene)
            self.ran = len(self.scripts) if ok else None
        if self.ran is not None:
            return
        for attempt in range(2):
            ex.reset()
            results = [ex.run(script) for script in self.scripts]
            if all(r.ok for r in results):
                if same_members(results[-1] if results else None, scene):
                    self.ran = len(self.scripts)
                    return
                break  # they ran, and built other members: running them again will not help
            if attempt == 0:
                # The agent's earlier scripts ran in this process and may have broken it
                # (patched bpy, builtins): a fresh process undoes whatever they did.
                ex.restart()
        # A full rebuild: the factory scene's own objects must not rename members (its 'Cube'
        # would turn the agent's 'Cube' into 'Cube.001' in the feedback).
        script = structure_to_bpy(scene, self.collection, clear=True)
        ex.reset()
        rebuilt = ex.run(script)
        if not rebuilt.ok:
            ex.restart()
            rebuilt = ex.run(script)
        if not rebuilt.ok:
            raise RuntimeError(f"could not rebuild the scene in the executor: {rebuilt.error}")
        self.scripts, self.ran, self._ends_in_edit = [script], 1, True


def same_members(result: Any, scene: Structure) -> bool:
    """Whether a run's exported members are ``scene``'s (no run: whether ``scene`` is empty)."""
    if result is None:
        return len(scene) == 0
    try:
        got = result.structure()
    except StructureFormatError:
        return False
    return got.names == scene.names and np.array_equal(got.sizes_m, scene.sizes_m, equal_nan=True) and \
        np.array_equal(got.matrices, scene.matrices, equal_nan=True)
