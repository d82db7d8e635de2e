"""DreamHouse generator: generate + validate one structure (issue target ≤ 60 ms), and the
vectorised member assembly beside a per-member Python loop."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
from _common import Figure, median_time

from buildbench.suites.dreamhouse.check.validate import validate
from buildbench.suites.dreamhouse.generate import STYLE_CODES, TaskId, generate_structure
from buildbench.suites.dreamhouse.generate.house import build_frame
from buildbench.suites.dreamhouse.generate.layout import sample_params
from buildbench.suites.dreamhouse.model import Member, Structure

#: One task per style, roofs and complexities in turn (a small stratified sample).
TASKS = [TaskId(code, 1 + s % 6, s) for s, code in enumerate(STYLE_CODES)]


def _generate_and_validate() -> None:
    for t in TASKS:
        validate(generate_structure(t, 0).structure, "paper")


def _validate_only(structures: list[Structure]) -> None:
    for s in structures:
        validate(s, "paper")


def _loop_assembly(frames: list) -> None:  # noqa: ANN001 - FrameArrays
    """Naive baseline: one Member object (and one Euler matrix) per member, then pack."""
    for fa in frames:
        members = []
        for i, name in enumerate(fa.names):
            m = fa.matrices[i]
            yaw = math.atan2(m[1, 0], m[0, 0])
            pitch = math.asin(max(-1.0, min(1.0, m[2, 0])))
            members.append(Member.box(name, fa.sizes_m[i], m[:3, 3], (0.0, -pitch, yaw)))
        Structure.from_members(members)


def _vector_assembly(frames: list) -> None:  # noqa: ANN001
    for fa in frames:
        fa.to_structure({})


def _cpu_seconds(fn: Callable[[], None]) -> float:
    """Process CPU time of one call: on a shared, overloaded machine it tracks our own work
    better than wall time does."""
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def run() -> list[Figure]:
    """Time per structure, averaged over one task of each of the 13 styles."""
    k = len(TASKS)
    houses = [generate_structure(t, 0) for t in TASKS]
    structures = [h.structure for h in houses]
    members = int(np.mean([len(s) for s in structures]))
    ours = median_time(_generate_and_validate, repeat=3, warmup=1) / k
    base = median_time(lambda: _validate_only(structures), repeat=3, warmup=1) / k
    ours_cpu = _cpu_seconds(_generate_and_validate) / k
    base_cpu = _cpu_seconds(lambda: _validate_only(structures)) / k
    frames = [build_frame(sample_params(t, 0)).frame for t in TASKS]
    vec = median_time(lambda: _vector_assembly(frames), repeat=3, warmup=1) / k
    loop = median_time(lambda: _loop_assembly(frames), repeat=3, warmup=1) / k
    return [
        Figure(
            "dreamhouse generate + validate one structure",
            ours,
            baseline="validate alone (same structures)",
            baseline_seconds=base,
            target_seconds=0.060,
            extra={
                "structures": k,
                "mean_members": members,
                "generate_only_s": ours - base,
                "cpu_s": ours_cpu,
                "validate_cpu_s": base_cpu,
            },
        ),
        Figure(
            "dreamhouse member assembly (arrays → Structure)",
            vec,
            baseline="per-member Member.box loop",
            baseline_seconds=loop,
            extra={"structures": k, "mean_members": members},
        ),
    ]
