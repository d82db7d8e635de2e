"""The ``degraded`` calibration agent: the deterministic evaluator's verdicts with a fraction of
them flipped (``-o degrade=FRACTION``, seeded by the episode seed; see
:mod:`buildbench.harness.degrade`). It submits through the env like any evaluator.

The parts corrupted are the task's constraint verdicts and its holistic verdict, each flipped on
its own: flipping the holistic verdict with the constraints (valid iff all hold) would not be
monotone, since flipping every verdict of an invalid task with one failing constraint makes it
invalid again. An unjudged constraint (``holds`` null) stays unjudged.
"""

from __future__ import annotations

from typing import Any

from buildbench.harness import Agent, Task
from buildbench.harness.degrade import Corruption, SeededAgent

from .agents import Submission, VerdictAgent, _sync
from .options import LegoEvalOptions


def flip_verdicts(submission: Submission, fraction: float, seed: int) -> Submission:
    """``submission`` with ``fraction`` of its constraint verdicts and holistic verdict flipped."""
    verdicts = [dict(v) for v in submission["verdicts"]]
    c = Corruption(len(verdicts) + 1, fraction, seed, draws=1)
    for i in c.indices:
        if i == len(verdicts):
            if submission.get("valid") is not None:
                submission = {**submission, "valid": not submission["valid"]}
        elif verdicts[i].get("holds") is not None:
            verdicts[i]["holds"] = not verdicts[i]["holds"]
            verdicts[i]["explanation"] = f"[degraded: flipped] {verdicts[i].get('explanation', '')}"
    return {**submission, "verdicts": verdicts}


def degraded(task: Task, model: Any, options: LegoEvalOptions) -> Agent:
    from .check import deterministic as check_task

    fraction = options.degrade

    def build(seed: int) -> Agent:
        return VerdictAgent("degraded", _sync(lambda: flip_verdicts(check_task(task), fraction, seed)))

    return SeededAgent(build)
