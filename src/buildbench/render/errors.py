"""Exceptions raised by :mod:`buildbench.render`."""

from __future__ import annotations

#: Debian/Ubuntu packages that provide headless OpenGL through EGL (Mesa llvmpipe on a CPU).
EGL_SYSTEM_PACKAGES = ("libegl1", "libegl-mesa0", "libgl1-mesa-dri")


class RenderInputError(ValueError):
    """Geometry, colours, cameras or images given to the renderer are malformed."""


class RenderUnavailableError(RuntimeError):
    """No headless OpenGL context could be created (EGL or a GL driver is missing)."""
