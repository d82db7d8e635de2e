"""The ``forkserver`` context with the modules a call needs imported in the server.

multiprocessing starts one forkserver per process, and ``set_forkserver_preload`` only acts when
it starts: the modules of the first call that starts it are the only ones it ever holds. A
process that plays episodes of several suites in turn (a test session, a notebook, the Inspect
integration) would then import every later suite again in each forked child: 1.5-3.5 CPU s per
episode and per scoring, against a fork for the preloaded suite.

`forkserver_context` keeps what the server was started with. When a call needs a module the
running server lacks, and the server has no live child (none would survive its end: isolated
children and pool workers die with it, `die_with_parent`), the server is stopped and started
again with the call's modules. A restart costs about one child's import, so a process that
alternates suites call by call pays no more than before, and one that plays a suite's episodes
in a row pays once. (The union of every module asked for was tried: each restart then imports
all suites seen so far, and it came out no better than never restarting.) Where the children
cannot be read (no ``/proc/PID/task/PID/children``) or Python lacks the private ``_stop``, nothing is stopped: the
call forks from the running server as before and its child imports what it needs.

`without_main_script` starts a child that does not run the parent's main script again. A spawn or
forkserver child runs it first, as ``__mp_main__`` (multiprocessing's ``spawn.prepare``, told by
``spawn.get_preparation_data``), so that what the script defines can be unpickled there; the
forkserver never holds it (Python 3.11-3.13 pass it to the server under a key that
``get_preparation_data`` never writes). A Python-API user whose script imports torch or Ray at its
top paid that import in every scoring process: 20 example episodes with 2 workers, a script with
``import ray`` at its top, took 27-31 s against 6 s. multiprocessing has no hook for this:
``spawn.get_preparation_data`` is wrapped once, here, and leaves the main script out of the data of
a child started while this thread is inside `without_main_script` (a thread-local flag: the runner
starts children from several threads at once; every other child gets the data as before).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.context
import multiprocessing.forkserver
import multiprocessing.spawn
import pickle
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from buildbench.parallel import fit_socket_dir

_lock = threading.Lock()
#: The server started here (its pid) and what it was started with; a server of another pid was
#: started by someone else, with modules not known here.
_started_pid: int | None = None
_preloaded: list[str] = []


def forkserver_context(preload: Sequence[str]) -> multiprocessing.context.ForkServerContext:
    """The forkserver context, its server running and holding ``preload`` where that is safe."""
    global _started_pid
    context = multiprocessing.get_context("forkserver")
    wanted = list(dict.fromkeys(preload))
    with _lock:
        server = getattr(multiprocessing.forkserver, "_forkserver", None)
        pid = getattr(server, "_forkserver_pid", None)
        lacks = pid != _started_pid or any(name not in _preloaded for name in wanted)
        stop = getattr(server, "_stop", None)
        if pid is not None and lacks and stop is not None and _idle(pid):
            stop()
        context.set_forkserver_preload(wanted)
        fit_socket_dir()
        multiprocessing.forkserver.ensure_running()
        now = getattr(server, "_forkserver_pid", None)
        if now != pid:  # started here, now: with this call's modules
            _started_pid = now
            _preloaded[:] = wanted
    return context


def _idle(pid: int) -> bool:
    """Whether the server has no live child (False where that cannot be read)."""
    try:
        return not Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return False


#: Set in a thread while it starts a child that must not run the main script (`without_main_script`).
_sparing = threading.local()
#: What a pickled call that refers to the main module holds: its module name, as the script
#: (``__main__``) or as a child that ran it (``__mp_main__``: a pool worker calling in turn).
_MAIN_NAMES = (b"__main__", b"__mp_main__")


def main_script_rerun() -> bool:
    """Whether a child of this process would run its main module again (``spawn.get_preparation_data``
    decides the same way: a main module with a spec, or with a file)."""
    main = sys.modules.get("__main__")
    return main is not None and (getattr(getattr(main, "__spec__", None), "name", None) is not None
                                 or getattr(main, "__file__", None) is not None)


def refers_to_main(call: object) -> bool:
    """Whether unpickling ``call`` may need the main module: a class or function it defines, or
    anything that names it (the module name is stored as text, at its first use, by every pickle
    protocol). True also where ``call`` does not pickle here: nothing is known then."""
    try:
        data = pickle.dumps(call, protocol=pickle.DEFAULT_PROTOCOL)
    except Exception:
        return True
    return any(name in data for name in _MAIN_NAMES)


@contextlib.contextmanager
def without_main_script() -> Iterator[None]:
    """Children started in this block by this thread do not run the main script again."""
    _wrap_preparation_data()
    _sparing.on = True
    try:
        yield
    finally:
        _sparing.on = False


def _wrap_preparation_data() -> None:
    with _lock:
        original: Callable[[str], dict[str, Any]] = multiprocessing.spawn.get_preparation_data
        if getattr(original, "_spares_main", False):
            return

        def get_preparation_data(name: str) -> dict[str, Any]:
            data = original(name)
            if getattr(_sparing, "on", False):
                data.pop("init_main_from_path", None)
                data.pop("init_main_from_name", None)
            return data

        get_preparation_data._spares_main = True  # type: ignore[attr-defined]
        multiprocessing.spawn.get_preparation_data = get_preparation_data
