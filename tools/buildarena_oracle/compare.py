"""Compare our library (either profile) with the original's recorded answers, per operation.

Run with the project's environment::

    .venv/bin/python tools/buildarena_oracle/compare.py tests/buildarena/data/differential-heldout.jsonl.gz

Prints overall and per-operation agreement (normalized, exact, block ids after
the call) for the ``released`` and ``default`` profiles, for call recordings and
for assembly recordings (whose assembly-session operations are listed as
``assembly/<op>``); ``--misses FILE``
writes every disagreeing call as JSON for inspection; ``--differing-seeds FILE`` writes the seeds
with any call whose text or ids differ exactly (the released profile), for ``run_original.py
--only`` when recording another CPU class (README, "Recording another CPU class").
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
from pathlib import Path
from typing import Any

from buildbench.suites.buildarena.library import Workbench
from buildbench.suites.buildarena.library.released import ReleasedWorkbench
from buildbench.suites.buildarena.library.released.agreement import (
    Agreement,
    default_workspace,
    measure,
    measure_sessions,
    released_workspace,
)


def _session(profile: str) -> Any:
    bench: Any = ReleasedWorkbench() if profile == "released" else Workbench()

    def call(op: str, params: dict[str, Any]) -> tuple[str, list[str]]:
        return bench.call(op, params).text, list(bench.machine.blocks)

    return call


def load(path: Path) -> list[dict[str, Any]]:
    """Recorded sequences from a .jsonl or .jsonl.gz file."""
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def report(name: str, agreement: Agreement) -> None:
    n = sum(agreement.total.values())
    print(f"{name}: {n} calls, normalized {agreement.rate('normalized'):.2%}, exact {agreement.rate('exact'):.2%}, "
          f"ids {agreement.rate('state'):.2%}")
    for row in agreement.table():
        calls = row["calls"]
        print(f"  {row['op']:<26} {calls:>6}  normalized {row['normalized']:>6} ({row['normalized'] / calls:.1%})"
              f"  exact {row['exact']:>6} ({row['exact'] / calls:.1%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recording", type=Path)
    parser.add_argument("--profile", choices=["released", "default", "both"], default="both")
    parser.add_argument("--misses", type=Path, help="write disagreeing calls here (JSON)")
    parser.add_argument("--differing-seeds", type=Path,
                        help="write the seeds with any call differing exactly (released profile), one a line")
    args = parser.parse_args()
    sequences = load(args.recording)
    profiles = ["released", "default"] if args.profile == "both" else [args.profile]
    misses: dict[str, Any] = {}
    differing: list[Any] = []
    for profile in profiles:
        agreement = Agreement()
        for seq in sequences:  # one at a time, to name the seeds that differ anywhere
            if "sessions" in seq:  # assembly recordings (run_original.py --assembly)
                workspace = released_workspace if profile == "released" else default_workspace
                part = measure_sessions([seq], workspace)
            else:
                part = measure([seq], functools.partial(_session, profile))
            for kind in ("total", "exact", "normalized", "state"):
                getattr(agreement, kind).update(getattr(part, kind))
            agreement.misses.extend(part.misses)
            if profile == "released" and (part.exact != part.total or part.state != part.total):
                differing.append(seq.get("seed"))
        report(profile, agreement)
        misses[profile] = agreement.misses
    if args.differing_seeds:
        args.differing_seeds.write_text("".join(f"{seed}\n" for seed in differing), encoding="utf-8")
        print(f"{len(differing)} of {len(sequences)} sequences differ exactly (released): {args.differing_seeds}")
    if args.misses:
        args.misses.write_text(json.dumps(misses, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
