"""BuildArena library profiles: replaying the differential tool's recorded call sequences.

* ``buildarena-replay-released``: the ``released`` profile (the original library's behaviour,
  trimesh-style meshes through FCL) on the first ``SEQUENCES`` sequences of
  ``tests/buildarena/data/differential-dev.jsonl.gz``, beside the ``default`` profile on the
  same calls.
* ``buildarena-replay-default``: the ``default`` profile on the same calls, beside the
  ``released`` profile (the same two timings read the other way, so each figure names the
  profile it measures).

Both replay each sequence on a fresh machine through ``library.replay`` (what
``buildbench buildarena replay`` runs, without the JSON and agreement count around it).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from _common import Figure, median_time

from buildbench.suites.buildarena.library import replay

DATA = Path(__file__).resolve().parents[1] / "tests" / "buildarena" / "data" / "differential-dev.jsonl.gz"
SEQUENCES = 60


def _sequences() -> list[list[dict[str, Any]]]:
    with gzip.open(DATA, "rt", encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh if line.strip()][:SEQUENCES]
    return [[{"op": c["op"], "params": c["params"]} for c in line["calls"]] for line in lines]


def _replay_all(sequences: list[list[dict[str, Any]]], profile: str) -> None:
    for calls in sequences:
        result = replay(calls, profile=profile)
        assert result.error is None, result.error


def run() -> list[Figure]:
    """Time both profiles on the same recorded calls."""
    sequences = _sequences()
    calls = sum(len(s) for s in sequences)
    released = median_time(lambda: _replay_all(sequences, "released"), repeat=3, warmup=1)
    default = median_time(lambda: _replay_all(sequences, "default"), repeat=3, warmup=1)
    extra = {"sequences": len(sequences), "calls": calls}
    return [
        Figure("buildarena-replay-released", released, baseline="default profile, same calls",
               baseline_seconds=default, extra={**extra, "calls_per_s": round(calls / released, 1)}),
        Figure("buildarena-replay-default", default, baseline="released profile, same calls",
               baseline_seconds=released, extra={**extra, "calls_per_s": round(calls / default, 1)}),
    ]


if __name__ == "__main__":
    for figure in run():
        print(json.dumps(figure.to_dict()))
