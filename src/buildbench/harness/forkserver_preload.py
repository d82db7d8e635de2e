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
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import multiprocessing.forkserver
import threading
from collections.abc import Sequence
from pathlib import Path

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
