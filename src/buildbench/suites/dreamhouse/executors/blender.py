"""The ``blender`` executor: agent scripts in real Blender, inside the sandbox.

Blender runs as a child process of the sandboxed worker (the sandbox cannot yet start
its child on another interpreter), so it shares the worker's namespaces, rlimits and
kill-on-timeout. Two ways to get Blender:

- the ``bpy`` wheel in its own virtualenv (default ``.venv-blender`` at the repository
  root, made by ``tools/setup_blender.sh``): ``python DRIVER``;
- a ``blender`` binary: ``blender --background --factory-startup --python DRIVER --``.
"""

from __future__ import annotations

import os
from pathlib import Path

from buildbench.harness.errors import BuildbenchError
from buildbench.sandbox import Isolation, Limits
from buildbench.suites.dreamhouse.executors._base import Executor
from buildbench.suites.dreamhouse.executors._child_hooks import driver_path

#: Default limits per run: the released harness's Blender timeout (180 s, spec §5.5) and
#: room for Blender's address space and threads (2 GiB was enough for 200 cubes here).
BLENDER_LIMITS = Limits(wall_s=180.0, cpu_s=180, memory_mb=4096, max_processes=256)

#: Where ``tools/setup_blender.sh`` puts the ``bpy`` virtualenv.
DEFAULT_VENV = Path(__file__).resolve().parents[5] / ".venv-blender"


class BlenderUnavailable(BuildbenchError):
    """No usable Blender: neither the ``bpy`` virtualenv nor a ``blender`` binary."""


def find_blender_python(venv: str | os.PathLike[str] | None = None) -> Path:
    """The Python of the ``bpy`` virtualenv (``BUILDBENCH_BLENDER_VENV`` or ``.venv-blender``).

    Raises:
        BlenderUnavailable: When it does not exist, saying how to create it.
    """
    root = Path(venv or os.environ.get("BUILDBENCH_BLENDER_VENV") or DEFAULT_VENV)
    python = root / "bin" / "python"
    if not python.exists():
        raise BlenderUnavailable(
            f"no bpy virtualenv at {root}: run tools/setup_blender.sh (or pass blender_binary=PATH)"
        )
    return python


class BlenderExecutor(Executor):
    """Runs scripts in real Blender against one persistent scene."""

    kind = "blender"

    def __init__(
        self,
        *,
        collection: str | None = None,
        venv: str | os.PathLike[str] | None = None,
        blender_binary: str | os.PathLike[str] | None = None,
        limits: Limits | None = None,
        isolation: Isolation = "auto",
    ) -> None:
        """Prepare a Blender executor (Blender starts on the first run, about 1-2 s).

        Args:
            collection: Export only this collection (released rule); None: every mesh in the scene.
            venv: The ``bpy`` virtualenv (default ``.venv-blender``); ignored with ``blender_binary``.
            blender_binary: Path of a ``blender`` executable to use instead of the wheel.
            limits: Sandbox limits per run (default `BLENDER_LIMITS`).
            isolation: Sandbox backend (``auto``, ``bwrap`` or ``process``).

        Raises:
            BlenderUnavailable: Neither the virtualenv nor the given binary exists.
        """
        driver = str(driver_path())
        if blender_binary is not None:
            binary = Path(blender_binary)
            if not binary.exists():
                raise BlenderUnavailable(f"blender binary {binary} does not exist")
            command = [str(binary), "--background", "--factory-startup", "--python", driver, "--"]
            # A binary ships its libraries beside it (the official tarball) or in /usr.
            readable: tuple[str, ...] = (str(binary.resolve().parent),)
        else:
            python = find_blender_python(venv)
            command = [str(python), "-s", "-B", driver]
            # The venv and the interpreter it was made from (its python links there).
            readable = (str(python.parents[1]), str(python.resolve().parents[1]))
        limits = limits or BLENDER_LIMITS
        super().__init__(
            setup="buildbench.suites.dreamhouse.executors._child_hooks:blender_setup",
            inputs={"command": command, "collection": collection, "cpu_s": limits.cpu_s},
            limits=limits,
            isolation=isolation,
            readable=readable,
        )
