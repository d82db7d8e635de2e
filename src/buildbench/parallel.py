"""Where batch work runs: a local process pool (the default) or a Ray cluster (``--backend ray``).

`map_ordered` is the one map-over-items of the batch commands (dataset generation, renders,
trajectory reversal): results come back in item order whatever finishes first, with a bounded
number of items in flight, so the files a command writes are byte-identical across backends
and memory stays flat on big datasets.

Ray is imported only when a `Backend` names it. `connect_ray` joins the cluster at
``address`` (``auto``: the one ``ray start`` runs on this machine; ``ray://HOST:PORT``: a
remote head through Ray Client) or, without an address, starts a private local instance that
ends with this process. A task whose worker process or node dies is re-run by Ray
(`RAY_TASK_RETRIES` times); a task that raises is not re-run, its exception is raised here.

Renders on a Ray worker: tasks reserve no GPU, and Ray (>= 2.50) leaves ``CUDA_VISIBLE_DEVICES``
alone for such tasks, so the worker's EGL loader (libglvnd) picks the node's GPU driver where
one is installed and Mesa's llvmpipe CPU rasterizer otherwise (see `buildbench.render.context`).
"""

from __future__ import annotations

import importlib.machinery
import logging
import multiprocessing
import multiprocessing.process
import multiprocessing.util
import os
import shutil
import socket
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from types import ModuleType
from typing import Any, NoReturn, TypeVar

from buildbench.errors import ConfigError

T = TypeVar("T")
R = TypeVar("R")

BACKENDS = ("process", "ray")
#: Re-runs of a Ray task whose worker process or node died (never of one that raised).
RAY_TASK_RETRIES = 3
#: Install hint printed when ``--backend ray`` is asked for without Ray.
RAY_INSTALL_HINT = "pip install 'buildbench[ray]'"
#: Seconds to wait for a cluster address to accept a TCP connection.
REACH_TIMEOUT_S = 5.0
#: Bytes of a Unix socket's path, its final NUL included (``sun_path``: 108 on Linux, 104 on macOS
#: and the BSDs).
SUN_PATH_BYTES = 108 if sys.platform.startswith("linux") else 104
#: What multiprocessing adds to its temp dir for the forkserver's socket: ``/listener-`` and 8
#: random characters; and for the temp dir itself under the temp root: ``/pymp-`` and 8.
_LISTENER_NAME_BYTES = 18
_PYMP_NAME_BYTES = 14
#: Short roots for that temp dir when the user's own (``TMPDIR``) is too deep for a socket path.
SHORT_TEMP_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")


@dataclass(frozen=True)
class Backend:
    """Where work runs.

    Attributes:
        name: ``process`` (a local process pool) or ``ray``.
        address: Ray only: ``auto``, ``ray://HOST:PORT`` or ``HOST:PORT`` of a running cluster;
            None starts a local Ray instance for this process.
    """

    name: str = "process"
    address: str | None = None

    def __post_init__(self) -> None:
        if self.name not in BACKENDS:
            raise ConfigError(f"backend must be one of {', '.join(BACKENDS)}, got {self.name!r}")
        if self.address is not None:
            if self.name != "ray":
                raise ConfigError("--address is only meaningful with --backend ray")
            if not isinstance(self.address, str) or not self.address.strip():
                raise ConfigError(f"--address must be auto, ray://HOST:PORT or HOST:PORT, got {self.address!r}")

    @property
    def is_ray(self) -> bool:
        return self.name == "ray"


PROCESS = Backend()


def connect_ray(address: str | None = None) -> ModuleType:
    """The ``ray`` module, connected to the cluster at ``address`` (or to a new local instance).

    Connecting again in a process that is already connected reuses that connection.

    Raises:
        ConfigError: Ray is not installed, or the cluster at ``address`` cannot be reached.
    """
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--backend ray needs Ray, which is not installed: {RAY_INSTALL_HINT}") from None
    if ray.is_initialized():
        return ray
    where = address or "a new local instance"
    if address is not None:
        _check_reachable(address)
    try:
        # "local": a new instance even where `ray start` left a cluster (or its stale address file).
        if address is None:
            ray.init(address="local", logging_level=logging.ERROR, log_to_driver=False, include_dashboard=False)
        else:
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError, OSError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise ConfigError(f"cannot connect to the Ray cluster at {where}: {first}") from None
    return ray


def _check_reachable(address: str) -> None:
    """Fail fast on a HOST:PORT nobody listens on (Ray itself retries for minutes)."""
    if address == "auto":
        return  # Ray finds the local cluster itself and says at once when there is none
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigError(f"Ray address {address!r} is not auto, ray://HOST:PORT or HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_TIMEOUT_S).close()
    except OSError as exc:
        raise ConfigError(f"cannot connect to the Ray cluster at {address}: nothing answers on "
                          f"{host}:{port} ({exc.strerror or exc})") from None


def cluster_cpus(ray: ModuleType) -> int:
    """CPUs of the connected Ray cluster (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def raise_task_error(exc: BaseException) -> NoReturn:
    """Raise the exception a Ray task raised as itself, not wrapped with the remote traceback
    (the CLI prints one line; Ray's wrapper spans many)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        raise cause from None
    raise exc


def map_ordered(fn: Callable[[T], R], items: Iterable[T], *, workers: int, backend: Backend = PROCESS,
                start_method: str | None = None, in_flight: int | None = None) -> Iterator[R]:
    """``map(fn, items)`` on ``backend``, results in item order.

    Args:
        fn: A module-level function (it is pickled by reference to the workers).
        items: Picklable arguments, consumed lazily.
        workers: Processes of the local pool (1 or less: run here, one item after another);
            ignored by Ray, which uses every CPU of the cluster.
        backend: Where to run.
        start_method: multiprocessing start method of the pool (None: the platform default);
            ``forkserver`` for work that creates a GL context.
        in_flight: Items submitted and not yet yielded (default: twice the parallelism).

    Raises:
        ConfigError: Ray asked for but not installed or not reachable. Any exception ``fn``
            raises is raised here, as itself.
    """
    if backend.is_ray:
        yield from _map_ray(fn, items, backend, in_flight)
        return
    if workers <= 1:
        yield from map(fn, items)
        return
    context = multiprocessing.get_context(start_method) if start_method else None
    if context is not None and context.get_start_method() == "forkserver":
        fit_socket_dir()
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: deque[Future[R]] = deque()
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= (in_flight or 2 * workers):
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def fit_socket_dir() -> None:
    """Make the forkserver's socket path fit ``sun_path`` before a forkserver starts.

    multiprocessing binds the forkserver's socket in a temp dir of its own under the user's temp
    root (``TMPDIR``) and fails with "AF_UNIX path too long" where that root is deep (a cluster
    job's scratch folder, a test's temporary folder): every run would end there. Such a process
    gets its temp dir under the first short root that exists instead (nothing else of ours lives
    there; it is removed at exit, as multiprocessing's own). A temp dir chosen earlier that no
    longer exists is replaced the same way. Nothing changes where the path fits.
    """
    config = multiprocessing.process.current_process()._config  # type: ignore[attr-defined]
    current = config.get("tempdir")
    if current is not None:
        deep = len(os.fsencode(current)) + _LISTENER_NAME_BYTES
        if deep < SUN_PATH_BYTES and os.path.isdir(current):
            return
    elif len(os.fsencode(tempfile.gettempdir())) + _PYMP_NAME_BYTES + _LISTENER_NAME_BYTES < SUN_PATH_BYTES:
        return
    for root in SHORT_TEMP_ROOTS:
        try:
            short = tempfile.mkdtemp(prefix="pymp-", dir=root)
        except OSError:
            continue
        multiprocessing.util.Finalize(None, shutil.rmtree, args=(short,), kwargs={"ignore_errors": True},
                                      exitpriority=-100)
        config["tempdir"] = short
        return


def _map_ray(fn: Callable[[T], R], items: Iterable[T], backend: Backend, in_flight: int | None) -> Iterator[R]:
    ray = connect_ray(backend.address)
    remote = ray.remote(_call_in).options(max_retries=RAY_TASK_RETRIES, retry_exceptions=False)
    limit = in_flight or 2 * cluster_cpus(ray)
    cwd = os.getcwd()
    pending: deque[Any] = deque()
    try:
        for item in items:
            pending.append(remote.remote(cwd, fn, item))
            if len(pending) >= limit:
                yield _get(ray, pending.popleft())
        while pending:
            yield _get(ray, pending.popleft())
    finally:
        for ref in pending:  # an error or an abandoned generator: stop the rest
            ray.cancel(ref)


def _call_in(cwd: str, fn: Callable[[T], R], item: T) -> R:
    enter_driver_dir(cwd)
    return fn(item)


def enter_driver_dir(cwd: str) -> None:
    """Make a Ray worker resolve relative paths as the driver does, where its folder exists
    on the worker's node (the process pool's workers inherit the folder; Ray's do not), and
    start its child processes without Ray's worker script (`spare_children_the_worker_script`)."""
    if os.path.isdir(cwd) and os.getcwd() != cwd:
        os.chdir(cwd)
    spare_children_the_worker_script()


def spare_children_the_worker_script() -> None:
    """Keep the processes a Ray worker starts through multiprocessing (``call_isolated``'s scoring
    and episode processes, a forkserver pool) from running Ray's worker script first.

    A spawn or forkserver child runs its parent's main script again, as ``__mp_main__``, so that
    what the script defines can be unpickled there, unless the main module was run by name as
    ``__main__`` (``python -m``). A Ray worker's main script is Ray's ``default_worker.py``, which
    imports Ray and defines nothing anyone sends a child; yet every child imported Ray again (from
    source where bytecode is not written): 1.0-1.8 s wall per scored episode at load 4-10 on 2 cores,
    17 ms without. The main module is marked as run by name ``__main__``, as ``python -m`` and
    ``python -c`` leave it, which multiprocessing's children skip. Only Ray's own worker script is
    marked (a task that Ray runs elsewhere, e.g. in a driver, changes nothing).
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or getattr(main, "__spec__", None) is not None or not isinstance(path, str):
        return
    ray = sys.modules.get("ray")
    ray_dir = os.path.dirname(getattr(ray, "__file__", None) or "")
    if ray_dir and os.path.realpath(path).startswith(os.path.realpath(ray_dir) + os.sep):
        main.__spec__ = importlib.machinery.ModuleSpec("__main__", None)


def _get(ray: ModuleType, ref: Any) -> Any:
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        raise_task_error(exc)


def backend_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--backend`` and ``--address`` for a batch command; it receives them as ``backend: Backend``."""
    import functools

    import click

    @click.option("--backend", "backend_name", type=click.Choice(BACKENDS), default="process", show_default=True,
                  help="Where the work runs: process, a local pool of --workers; ray, Ray tasks on a cluster (docs/ray.md).")
    @click.option("--address", default=None,
                  help="Ray cluster: auto or ray://HOST:PORT (default: a local Ray instance).")
    @functools.wraps(command)
    def wrapper(*args: Any, backend_name: str, address: str | None, **kwargs: Any) -> Any:
        try:
            backend = Backend(backend_name, address)
        except ConfigError as exc:
            raise click.UsageError(str(exc)) from None
        return command(*args, backend=backend, **kwargs)

    return wrapper
