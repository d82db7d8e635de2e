"""One headless OpenGL context per process, created on first use (moderngl on EGL).

On a machine without a GPU, EGL resolves to Mesa's llvmpipe software rasterizer; where a GPU
driver exposes EGL, the GPU is used. A context is not shared between threads; render from
one thread per process.

Processes: a child forked *after* its parent created the context cannot render (measured:
Mesa hands the child the parent's display, whose llvmpipe worker threads do not exist there,
so the first draw waits forever). :func:`get_context` detects that case and raises instead.
Start workers with the "spawn" or "forkserver" multiprocessing start method, or create the
context only inside the workers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from buildbench.render.errors import EGL_SYSTEM_PACKAGES, RenderUnavailableError

if TYPE_CHECKING:
    import moderngl


@dataclass(frozen=True)
class GLInfo:
    """What the current OpenGL context runs on."""

    renderer: str
    version: str
    vendor: str
    max_samples: int


@dataclass
class _Cached:
    context: moderngl.Context
    pid: int


_cached: _Cached | None = None


def _create_gl_context() -> moderngl.Context:
    """Create a standalone EGL context (separate so tests can replace it)."""
    import moderngl

    # moderngl's stub types ``backend`` wrongly as a dict; at runtime it is the backend name.
    return moderngl.create_context(standalone=True, backend="egl")  # type: ignore[arg-type]


def get_context() -> moderngl.Context:
    """The process's shared moderngl context, created on the first call.

    Raises:
        RenderUnavailableError: if EGL or an OpenGL 3.3 driver cannot be loaded (the message
            names the Debian packages to install and the underlying error), or if this
            process was forked after its parent created the context.
    """
    global _cached
    if _cached is not None:
        if _cached.pid == os.getpid():
            return _cached.context
        raise RenderUnavailableError(
            f"this process (pid {os.getpid()}) was forked from pid {_cached.pid} after that process "
            "created its OpenGL context; a forked child cannot render with it. Start worker "
            "processes with multiprocessing.get_context('spawn') or 'forkserver' instead."
        )
    try:
        context = _create_gl_context()
    except Exception as exc:  # any loader/driver failure means "no headless GL here"
        raise RenderUnavailableError(
            "headless OpenGL through EGL is unavailable "
            f"({type(exc).__name__}: {exc}). On Debian/Ubuntu install the system packages: "
            f"apt-get install {' '.join(EGL_SYSTEM_PACKAGES)}"
        ) from exc
    _cached = _Cached(context=context, pid=os.getpid())
    return context


def gl_info() -> GLInfo:
    """Describe the shared context (creating it if needed)."""
    ctx = get_context()
    return GLInfo(
        renderer=str(ctx.info["GL_RENDERER"]),
        version=str(ctx.info["GL_VERSION"]),
        vendor=str(ctx.info["GL_VENDOR"]),
        max_samples=int(ctx.max_samples),
    )
