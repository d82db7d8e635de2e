"""The ``forkserver`` context with the modules a call needs imported in the server.

multiprocessing starts one forkserver per process, and ``set_forkserver_preload`` only acts when
it starts: the modules of the first call that starts it are the only ones it ever holds. A
process that plays episodes of several suites in turn (a test session, a notebook, the Inspect
integration) would then import every later suite again in each forked child: 1.5-3.5 CPU s per
episode and per scoring, against a fork for the preloaded suite.

`forkserver_context` keeps what the server was started with. When a call needs a module the
running server lacks, and the server has no live child (none would survive its end: isolated
children and pool workers die with it, `die_with_parent`), the server is stopped and the next
start imports everything asked for so far, so a process alternating suites restarts it at most
once per new module, never back and forth. Where that cannot be known (no
``/proc/PID/task/PID/children``, a Python without the private ``_stop``), nothing is stopped: the
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
#: What a server started here preloads, in order: the union of all calls' modules so far.
_wanted: list[str] = []
#: The server started here (its pid) and what it was started with; a server of another pid was
#: started by someone else, with modules not known here.
_started_pid: int | None = None
_preloaded: list[str] = []


def forkserver_context(preload: Sequence[str]) -> multiprocessing.context.ForkServerContext:
    """The forkserver context, its server running and holding ``preload`` where that is safe."""
    global _started_pid
    context = multiprocessing.get_context("forkserver")
    with _lock:
        for name in preload:
            if name not in _wanted:
                _wanted.append(name)
        server = getattr(multiprocessing.forkserver, "_forkserver", None)
        pid = getattr(server, "_forkserver_pid", None)
        lacks = pid != _started_pid or any(name not in _preloaded for name in preload)
        stop = getattr(server, "_stop", None)
        if pid is not None and lacks and stop is not None and _idle(pid):
            stop()
        context.set_forkserver_preload(list(_wanted))
        multiprocessing.forkserver.ensure_running()
        now = getattr(server, "_forkserver_pid", None)
        if now != pid:  # started here, now: with everything asked for so far
            _started_pid = now
            _preloaded[:] = _wanted
    return context


def _idle(pid: int) -> bool:
    """Whether the server has no live child (False where that cannot be read)."""
    try:
        return not Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return False
