"""Imported by the forkserver alone (`buildbench.harness.isolated.FORKSERVER_PRELOAD`): the suite registry is read
there, once, so that every child forked from the server finds it read.

Each episode played apart and each isolated scoring looks its suite up (`registry.suite_target`). The registry is
cached per process, and a forkserver child starts from the server's memory, not the parent's: read in each
child, it opened every installed distribution's metadata again, 28 ms of the example suite's 34 ms scoring.
The children see the server's ``sys.path`` (multiprocessing hands it the parent's when it starts, as it hands
each child), which is the cache's key: a child whose path differs reads the registry for itself, as before.
"""

from __future__ import annotations

from .registry import suite_names

suite_names()
