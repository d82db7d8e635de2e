"""BuildArena sensitivity report: 3 physics settings × the 9 reference designs on 2 workers.

* ``buildarena-sensitivity-3x9``: ``sensitivity_report`` over a run of the reference agent on
  the nine tasks, settings baseline, ``weld_strength=0.5x`` and ``drag=2x`` (27 simulations,
  process pool of 2), beside the same 27 simulations one after another in this process.
  Goal (issue 21): at most 60 s on 2 cores. The flips each setting causes are recorded in
  ``extra`` (they are the report's finding on our reference designs).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from _common import Figure, check_run

from buildbench.harness import RunConfig, Runner
from buildbench.suites.buildarena.sensitivity import sensitivity_report

VARY = ["weld_strength=0.5x", "drag=2x"]
WORKERS = 2
TARGET_S = 60.0


def run() -> list[Figure]:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "reference"
        check_run(Runner(RunConfig(suite="buildarena", agent="reference", protocol="workflow", split="default",
                                   workers=WORKERS), run_dir).run(), 9)
        start = time.perf_counter()
        report = sensitivity_report([run_dir], VARY, workers=WORKERS)
        wall = time.perf_counter() - start
        start = time.perf_counter()
        sensitivity_report([run_dir], VARY, workers=1)
        serial = time.perf_counter() - start
    flips = {label: {task: block["settings"][label]["flips"] for task, block in report["tasks"].items()}
             for label in report["tasks"][next(iter(report["tasks"]))]["settings"]}
    return [Figure(name="buildarena-sensitivity-3x9", seconds=wall, baseline="the same simulations in one process",
                   baseline_seconds=serial, target_seconds=TARGET_S,
                   extra={"simulations": report["simulations"], "workers": WORKERS, "flips": flips,
                          "physics": report["physics"]})]
