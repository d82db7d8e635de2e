"""Which renderer drew a set of target views: the record datasets and task packs keep beside
their PNGs, so that named views are compared only with candidates drawn the same way.

A perfect copy of the target drawn by another renderer (GL vs our rasterizer, llvmpipe vs a
GPU, Cycles vs either) differs from the stored target in edge pixels, shading and
anti-aliasing: its MSE is not 0, and nothing in a score would show why. The record is one
line of text, a *stamp*:

- ``raster v<N>``: our rasterizer, ``N`` its ``PIXEL_VERSION`` (same pixels on every machine);
- ``gl <GL_RENDERER>``: OpenGL through that driver (``llvmpipe (LLVM 15.0.6, 256 bits)``, a
  GPU's name); pixels differ between drivers;
- ``cycles <S> spp``: Blender Cycles at ``S`` samples per pixel.

Two renders are comparable when their stamps are equal. Views without a stamp (packs and
datasets written before the record, released packs) are of unknown origin.
"""

from __future__ import annotations

import warnings

from buildbench.harness.errors import ConfigError

#: Key of the stamp in a task's ``inputs`` (beside ``inputs["views"]``).
MADE_BY_KEY = "views_made_by"
#: File beside a dataset's ``renders/<task_id>/`` folders holding the stamp of every PNG there.
RENDERS_RECORD = "made_by.json"

_warned: set[str] = set()


def made_by(renderer: str) -> str:
    """The stamp of what ``renderer`` draws on this machine.

    Raises:
        ConfigError: For an unknown renderer name.
        RenderUnavailableError: For ``gl`` without a headless OpenGL context.
    """
    if renderer == "raster":
        from buildbench.render.raster import PIXEL_VERSION

        return f"raster v{PIXEL_VERSION}"
    if renderer == "gl":
        from buildbench.render import gl_info

        return f"gl {gl_info().renderer}"
    if renderer == "cycles":
        from .views_cycles import CYCLES_SAMPLES

        return f"cycles {CYCLES_SAMPLES} spp"
    raise ConfigError(f"unknown renderer {renderer!r}; use raster, gl or cycles")


def stamp_of(inputs: dict[str, object]) -> str | None:
    """The stamp a task's named views carry; ``None`` when they carry none (unknown origin)."""
    value = inputs.get(MADE_BY_KEY)
    return value if isinstance(value, str) and value else None


def warn_unknown_once(where: str, renderer: str) -> None:
    """Say once per process that views of unknown origin are being drawn again with ``renderer``."""
    if renderer in _warned:
        return
    _warned.add(renderer)
    warnings.warn(
        f"{where}: the named target views do not record which renderer drew them (written before the record); "
        f"drawing targets again from their ground truth with {renderer} so that they compare with the candidates "
        "(said once)",
        UserWarning,
        stacklevel=3,
    )
