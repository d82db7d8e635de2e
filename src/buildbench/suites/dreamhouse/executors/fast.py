"""The ``fast`` executor: agent scripts against our pure-Python ``bpy``/``mathutils`` (see `fakebpy`)."""

from __future__ import annotations

from buildbench.sandbox import Isolation, Limits
from buildbench.suites.dreamhouse.executors._base import Executor

#: Default limits per run. The wall time is the released harness's Blender timeout
#: (``DREAMHOUSE_BLENDER_TIMEOUT`` = 180 s, spec §5.5).
FAST_LIMITS = Limits(wall_s=180.0, cpu_s=180, memory_mb=2048)


class FastExecutor(Executor):
    """Runs scripts in a sandboxed child against the fake ``bpy``; an unsupported API is an error naming it.

    Example:
        >>> with FastExecutor() as ex:
        ...     r = ex.run("import bpy\\nbpy.ops.mesh.primitive_cube_add(size=1)")
        ...     [m["name"] for m in r.members]
        ['Cube', 'Cube.001']
    """

    kind = "fast"

    def __init__(
        self, *, collection: str | None = None, limits: Limits | None = None, isolation: Isolation = "auto"
    ) -> None:
        """Prepare a fast executor.

        Args:
            collection: Export only this collection (the released rule, with its fallback
                to the collection holding the most meshes); None exports every mesh object
                in the scene.
            limits: Sandbox limits per run (default `FAST_LIMITS`).
            isolation: Sandbox backend (``auto``, ``bwrap`` or ``process``).
        """
        super().__init__(
            setup="buildbench.suites.dreamhouse.executors._child_hooks:fast_setup",
            inputs={"collection": collection},
            limits=limits or FAST_LIMITS,
            isolation=isolation,
        )
