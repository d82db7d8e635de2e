"""The optional C extensions: BuildArena's tick loop (``physics/_tick.c``) and the render layer's
rasterizer (``render/_raster.c``); everything else is in pyproject.toml.

MuJoCo's headers come from the ``mujoco`` wheel of the build environment. Without them, or without a
C compiler (``optional=True``), the package installs without the tick loop and the simulation runs
its Python loop (``physics.native`` says which one runs). The rasterizer needs only Python's headers;
without it ``render.raster`` draws the same pixels with numpy (``Rasterizer.native`` says which).
"""

from pathlib import Path

from setuptools import Extension, setup

# Bit-identical arithmetic with the numpy code: no fused multiply-adds, no reassociation.
_EXACT_FLOAT = ["-O3", "-ffp-contract=off", "-fno-fast-math"]


def _extensions() -> list[Extension]:
    raster = Extension(
        "buildbench.render._raster",
        ["src/buildbench/render/_raster.c"],
        extra_compile_args=_EXACT_FLOAT,
        optional=True,
    )
    return [raster, *_tick_extension()]


def _tick_extension() -> list[Extension]:
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
        extra_compile_args=_EXACT_FLOAT,
        optional=True,
    )]


setup(ext_modules=_extensions())
