"""The optional C tick loop of BuildArena's physics (``physics/_tick.c``); everything else is in pyproject.toml.

MuJoCo's headers come from the ``mujoco`` wheel of the build environment. Without them, or without a
C compiler (``optional=True``), the package installs without the extension and the simulation runs
its Python loop (``physics.native`` says which one runs).
"""

from pathlib import Path

from setuptools import Extension, setup


def _extensions() -> list[Extension]:
    try:
        import mujoco
    except ImportError:
        return []
    include = Path(mujoco.__file__).parent / "include"
    if not (include / "mujoco" / "mujoco.h").is_file():
        return []
    physics = "src/buildbench/suites/buildarena/physics"
    return [Extension(
        "buildbench.suites.buildarena.physics._tick",
        [f"{physics}/_tick.c", f"{physics}/_welds.c"],
        depends=[f"{physics}/_welds.h"],
        include_dirs=[str(include), physics],
        # Bit-identical arithmetic with the numpy loop: no fused multiply-adds, no reassociation.
        extra_compile_args=["-O3", "-ffp-contract=off", "-fno-fast-math"],
        optional=True,
    )]


setup(ext_modules=_extensions())
