"""One headless OpenGL context per process, created on first use (moderngl on EGL).

On a machine without a GPU, EGL resolves to Mesa's llvmpipe software rasterizer; where a GPU
driver exposes EGL, the GPU is used. An EGL context is current on one thread only, so every
GL call of the process runs on one dedicated thread (:func:`on_gl_thread`); renderers may be
created and used from any thread (the harness runs env steps in a thread pool).

Processes: a child forked *after* its parent created the context cannot render (measured:
Mesa hands the child the parent's display, whose llvmpipe worker threads do not exist there,
so the first draw waits forever). :func:`get_context` detects that case and raises instead.
Start workers with the "spawn" or "forkserver" multiprocessing start method, or create the
context only inside the workers.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

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

T = TypeVar("T")


@dataclass
class _GLThread:
    executor: ThreadPoolExecutor
    pid: int
    ident: int | None = None


_gl_thread: _GLThread | None = None
_gl_lock = threading.Lock()


def _mark_gl_thread() -> None:
    assert _gl_thread is not None
    _gl_thread.ident = threading.get_ident()


def on_gl_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn`` on the process's GL thread and return its result (exceptions propagate).

    Calls made on the GL thread itself run directly, so GL code may nest freely.
    """
    global _gl_thread
    with _gl_lock:
        # A forked child inherits the record of its parent's thread but not the thread.
        if _gl_thread is None or _gl_thread.pid != os.getpid():
            _gl_thread = _GLThread(ThreadPoolExecutor(max_workers=1, thread_name_prefix="buildbench-gl",
                                                      initializer=_mark_gl_thread), os.getpid())
        current = _gl_thread
    if current.ident == threading.get_ident():
        return fn(*args, **kwargs)
    return current.executor.submit(fn, *args, **kwargs).result()


def _create_gl_context() -> moderngl.Context:
    """Create a standalone EGL context (separate so tests can replace it)."""
    import moderngl

    # moderngl's stub types ``backend`` wrongly as a dict; at runtime it is the backend name.
    return moderngl.create_context(standalone=True, backend="egl")  # type: ignore[arg-type]


def get_context() -> moderngl.Context:
    """The process's shared moderngl context, created on the first call (on the GL thread).

    Raises:
        RenderUnavailableError: if EGL or an OpenGL 3.3 driver cannot be loaded (the message
            names the Debian packages to install and the underlying error), or if this
            process was forked after its parent created the context.
    """
    return on_gl_thread(_get_context)


def _get_context() -> moderngl.Context:
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
    return on_gl_thread(_gl_info)


def _gl_info() -> GLInfo:
    ctx = get_context()
    return GLInfo(
        renderer=str(ctx.info["GL_RENDERER"]),
        version=str(ctx.info["GL_VERSION"]),
        vendor=str(ctx.info["GL_VENDOR"]),
        max_samples=int(ctx.max_samples),
    )
