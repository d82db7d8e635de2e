"""Start-up: ``buildbench --help`` against ``python -c "import numpy, click"`` (issue 24:
at most 2.5 times the baseline's CPU time, about 0.3 s).

Both commands run as fresh processes, alternately, in the same run; each figure is the
median CPU seconds (user + system, from the children's resource usage) over the runs, CPU
rather than wall so that the load of a shared machine does not decide it. ``extra`` has
the wall medians and how many modules each imports.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import time

from _common import Figure

RUNS = 9
TARGET_RATIO = 2.5
HELP = [sys.executable, "-m", "buildbench", "--help"]
BASELINE = [sys.executable, "-c", "import numpy, click"]


def _cpu_and_wall(cmd: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def _modules(code: str) -> int:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(len(sys.modules)))"],
                         check=True, capture_output=True, text=True)
    return int(out.stdout.split()[-1])


def run() -> list[Figure]:
    ours: list[tuple[float, float]] = []
    base: list[tuple[float, float]] = []
    _cpu_and_wall(HELP)  # warm the file cache for both
    _cpu_and_wall(BASELINE)
    for _ in range(RUNS):
        ours.append(_cpu_and_wall(HELP))
        base.append(_cpu_and_wall(BASELINE))
    ours_cpu = statistics.median(c for c, _ in ours)
    base_cpu = statistics.median(c for c, _ in base)
    help_code = ("import sys\nfrom buildbench.cli import main\nsys.argv = ['buildbench', '--help']\n"
                 "import contextlib, io\nwith contextlib.redirect_stdout(io.StringIO()):\n"
                 "    try:\n        main()\n    except SystemExit:\n        pass")
    return [Figure(
        "buildbench --help start-up (CPU s)", ours_cpu, baseline="python -c 'import numpy, click'",
        baseline_seconds=base_cpu, target_seconds=TARGET_RATIO * base_cpu,
        extra={"ratio": round(ours_cpu / base_cpu, 2), "target_ratio": TARGET_RATIO, "runs": RUNS,
               "wall_s_median": round(statistics.median(w for _, w in ours), 3),
               "baseline_wall_s_median": round(statistics.median(w for _, w in base), 3),
               "modules": _modules(help_code), "baseline_modules": _modules("import numpy, click")},
    )]


if __name__ == "__main__":
    print(json.dumps([f.to_dict() for f in run()], indent=1))
