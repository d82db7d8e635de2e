"""Imported by the forkserver last, after the suites it preloads (`buildbench.harness.isolated.FORKSERVER_LAST`).

Every episode played apart and every isolated scoring is a child forked from the server; what the child does first
in each of them is paid once per episode. Done here, once:

- the record classes the suites define get their pydantic adapters and JSON Schemas (`record.warm_records`): made
  in each child, that was 3-5 CPU ms per class, with the lazy import of ``pydantic.dataclasses``;
- the server's objects are moved out of the garbage collector's generations (``gc.freeze``): a child's collection
  then never walks them, and the pages they lie on stay shared with the server instead of being copied on the
  child's first write to each object's GC header (about a seventh of a play's ~2,100 page faults).
"""

from __future__ import annotations

import gc

from .record import warm_records

warm_records()
gc.freeze()
