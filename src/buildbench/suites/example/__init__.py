"""``example``: stack blocks into a tower — the smallest complete suite.

It exists to show every part of the harness end to end (tasks, env, scripted and model
agents, protocols, checks, scores, store, report) on something a reader grasps in a minute,
and to test the harness without a heavy domain. Real suites follow the same layout.
"""

from .suite import suite

__all__ = ["suite"]
