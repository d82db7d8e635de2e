"""Run every ``benchmarks/bench_*.py`` and print each figure as a ratio against its baseline.

Each module exposes ``run() -> list[Figure]``. Each runs in its own Python process, so one
benchmark's state (a GL context, threads, a forked pool, imported simulators) cannot break
the next one, and a crash or hang is that benchmark's failure alone. Results go to
``bench-results/results.json``; a run of some of them (``make bench BENCH="legoeval render"``)
writes ``bench-results/results-legoeval-render.json`` instead, so it never replaces the full
run's file. Usage: ``python benchmarks/run.py [NAME_SUBSTRING ...]``.

The exit status is 1 only when a benchmark itself failed (raised, crashed, passed its
time limit, or returned a figure with neither a baseline nor the reason it has none); a
figure that misses its target and a baseline skipped with its reason are reported, not
failures.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import Figure, scaled_limit, slowdown  # noqa: E402

#: Wall seconds one benchmark may take on the reference machine (stretched by the slowdown).
BENCH_LIMIT_S = 2400.0
CHILD_FLAG = "--one"


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    # registered under its name, as an import would: a function it sends to a worker process
    # is pickled by that name (and the worker imports it from its folder, put on sys.path)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return mod


def _child(path: Path, out: Path) -> int:
    """Run one benchmark module in this process and write its figures to ``out``."""
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    figures = _load(path).run()
    out.write_text(json.dumps([f.to_dict() for f in figures]))
    return 0


def _run_one(path: Path, limit_s: float) -> tuple[list[Figure], str | None, float]:
    """One benchmark in its own process: its figures, the failure (or None), wall seconds."""
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        out = Path(tmp) / "figures.json"
        t0 = time.perf_counter()
        # Its own temporary folder (TMPDIR), removed afterwards: what it leaves there goes with it,
        # and what other programs on a shared machine leave in /tmp (e.g. a stale sandbox folder
        # the runner's start-up clean-up would walk) cannot break it. Its own session, so a
        # benchmark past its limit is ended with every process it started.
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), CHILD_FLAG, str(path), str(out)],
                                start_new_session=True, env={**os.environ, "TMPDIR": tmp})
        try:
            returncode = proc.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return [], f"{path.stem}: passed its limit of {limit_s:.0f} s wall", time.perf_counter() - t0
        finally:
            if proc.returncode is None:  # interrupted (Ctrl-C): take the benchmark down too
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        wall = time.perf_counter() - t0
        if returncode != 0:
            return [], f"{path.stem}: exited {returncode} (its traceback is above)", wall
        try:
            figures = [Figure.from_dict(d) for d in json.loads(out.read_text())]
        except (OSError, ValueError, TypeError) as exc:
            return [], f"{path.stem}: wrote no readable figures ({type(exc).__name__}: {exc})", wall
    # A figure alone says nothing about speed on a shared machine: its baseline, timed in the
    # same run, is what makes it a figure; where none can run, the reason is part of the result.
    bare = [f.name for f in figures if f.baseline_seconds is None and not f.baseline_skipped]
    if bare:
        return figures, (f"{path.stem}: {len(bare)} figure(s) with no baseline and no reason "
                         f"(baseline_skipped): {'; '.join(bare)}"), wall
    return figures, None, wall


def _value(v: float | None, unit: str) -> str:
    if v is None:
        return "-"
    return f"{v:.4f}" if unit == "s" else f"{v:.3g} ({unit})"


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[1] == CHILD_FLAG:
        return _child(Path(argv[2]), Path(argv[3]))
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(Console().width, 140))  # a log is not a narrow terminal
    # Words match the benchmarks' file names (bench_<words>.py); a hyphen stands for an underscore there.
    wanted = [w.replace("-", "_") for w in argv[1:]]
    known = [p.stem for p in sorted(HERE.glob("bench_*.py"))]
    unmatched = [w for w in wanted if not any(w in stem for stem in known)]
    if unmatched:
        print(f"error: no benchmark's name contains {', '.join(map(repr, unmatched))}; "
              f"the benchmarks: {', '.join(s.removeprefix('bench_') for s in known)}", file=sys.stderr)
        return 2
    started = time.time()
    slow = slowdown()
    limit_s = scaled_limit(BENCH_LIMIT_S)
    console.print(f"machine: {slow:.1f}x slower than the reference now (load {os.getloadavg()[0]:.1f}); "
                  f"each benchmark in its own process, limit {limit_s:.0f} s")
    figures: list[Figure] = []
    failures: list[str] = []
    runs: list[dict[str, Any]] = []
    for path in sorted(HERE.glob("bench_*.py")):
        if wanted and not any(w in path.stem for w in wanted):
            continue
        console.print(f"[bold]{path.stem}[/bold] …")
        got, failure, wall = _run_one(path, limit_s)
        figures.extend(got)
        runs.append({"benchmark": path.stem, "wall_s": round(wall, 2), "figures": len(got), "failure": failure})
        if failure:
            failures.append(failure)
            console.print(f"[red]{failure}[/red]")
    table = Table(title="buildbench benchmarks")
    for col in ("figure", "ours", "baseline", "baseline (s)", "speedup", "target", "ok"):
        table.add_column(col)
    for f in figures:
        d = f.to_dict()
        table.add_row(
            f.name,
            _value(f.seconds, f.unit),
            f.baseline or "-",
            "skipped" if f.baseline_skipped else _value(f.baseline_seconds, f.unit),
            "-" if f.speedup is None else f"{f.speedup:.1f}x",
            "-" if f.target_seconds is None else f"{f.target_seconds:g}",
            {True: "yes", False: "NO", None: "-"}[d["meets_target"]],
        )
    console.print(table)
    for f in figures:
        if f.baseline_skipped:
            console.print(f"baseline skipped for {f.name!r}: {f.baseline_skipped}")
    out = Path("bench-results")
    out.mkdir(exist_ok=True)
    payload = {
        "created_unix": started,
        "wall_s": round(time.time() - started, 1),
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count(), "slowdown_at_start": round(slow, 2),
                    "load_average_1min_at_end": round(os.getloadavg()[0], 2)},
        "benchmarks": runs,
        "figures": [f.to_dict() for f in figures],
        "failures": failures,
    }
    name = "results.json" if not wanted else "results-" + "-".join(re.sub(r"[^\w.]+", "_", w) for w in wanted) + ".json"
    (out / name).write_text(json.dumps(payload, indent=2))
    console.print(f"wrote {out / name} ({len(figures)} figures, {len(failures)} failures, "
                  f"{payload['wall_s']:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
