"""Run every ``benchmarks/bench_*.py`` and print each figure as a ratio against its baseline.

Each module exposes ``run() -> list[Figure]``. Results go to ``bench-results/results.json``.
Usage: ``python benchmarks/run.py [NAME_SUBSTRING ...]``.
"""

from __future__ import annotations

import importlib.util
import json
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import Figure  # noqa: E402


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv: list[str]) -> int:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    wanted = argv[1:]
    figures: list[Figure] = []
    failures: list[str] = []
    for path in sorted(HERE.glob("bench_*.py")):
        if wanted and not any(w in path.stem for w in wanted):
            continue
        console.print(f"[bold]{path.stem}[/bold] …")
        try:
            figures.extend(_load(path).run())
        except Exception as exc:  # one broken benchmark must not hide the others
            failures.append(f"{path.stem}: {type(exc).__name__}: {exc}")
            console.print(f"[red]{failures[-1]}[/red]")
    table = Table(title="buildbench benchmarks")
    for col in ("figure", "ours (s)", "baseline", "baseline (s)", "speedup", "target (s)", "ok"):
        table.add_column(col)
    for f in figures:
        d = f.to_dict()
        table.add_row(
            f.name,
            f"{f.seconds:.4f}",
            f.baseline or "-",
            "-" if f.baseline_seconds is None else f"{f.baseline_seconds:.4f}",
            "-" if f.speedup is None else f"{f.speedup:.1f}x",
            "-" if f.target_seconds is None else f"{f.target_seconds:g}",
            {True: "yes", False: "NO", None: "-"}[d["meets_target"]],
        )
    console.print(table)
    out = Path("bench-results")
    out.mkdir(exist_ok=True)
    payload = {
        "created_unix": time.time(),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "figures": [f.to_dict() for f in figures],
        "failures": failures,
    }
    (out / "results.json").write_text(json.dumps(payload, indent=2))
    console.print(f"wrote {out / 'results.json'}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
