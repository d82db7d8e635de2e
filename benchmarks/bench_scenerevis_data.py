"""SceneReVis data: reverse chains (Algorithm 1, 10 candidates, top 3 kept, instructions,
reasoning, ms-swift records) for 1,000 rooms without images on a pool of 2 processes
(issue target ≤ 60 s), beside the same work in one process; and the rate with images
(merged top + diagonal render per user turn) beside the same rooms without images.

Rooms: the 500 real 3D-FRONT bedrooms of ``../shared`` (when present) plus generated rooms
of all seven types up to 1,000; every room is reversed (no source filter), so the count is
exact.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from _common import Figure

from buildbench.suites.scenerevis.generate.flat import read_scenes
from buildbench.suites.scenerevis.generate.pipeline import ReverseOptions, RunStats, generate_chains
from buildbench.suites.scenerevis.generate.rooms import generate_rooms

N_ROOMS = 1000
N_IMAGE_ROOMS = 4
REAL = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "scenerevis" / "respace_scenes" / \
    "dataset_bedroom_test.jsonl"


def _rooms() -> tuple[list[dict], int]:
    real = list(read_scenes(REAL)) if REAL.exists() else []
    return real + generate_rooms(N_ROOMS - len(real), seed=0), len(real)


def _timed(rooms: list[dict], opts: ReverseOptions, workers: int, out: Path) -> tuple[float, RunStats]:
    t0 = time.perf_counter()
    stats = generate_chains(rooms, out, opts, workers)
    return time.perf_counter() - t0, stats


def run() -> list[Figure]:
    rooms, n_real = _rooms()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        opts = ReverseOptions(seed=0, filter_sources=False)
        # one run each, back to back (two each doubled the benchmark for the same ratio)
        pool_runs, serial_runs = [], []
        for _ in range(1):
            pool_s, stats = _timed(rooms, opts, 2, out / "pool.jsonl")
            serial_s, _ = _timed(rooms, opts, 1, out / "serial.jsonl")
            pool_runs.append(pool_s)
            serial_runs.append(serial_s)
        pool_s, serial_s = min(pool_runs), min(serial_runs)
        same = (out / "pool.jsonl").read_bytes() == (out / "serial.jsonl").read_bytes()
        few = rooms[:N_IMAGE_ROOMS]
        img_opts = ReverseOptions(seed=0, filter_sources=False, images_dir=out / "images")
        img_s, img_stats = _timed(few, img_opts, 2, out / "img.jsonl")
        plain_s, _ = _timed(few, opts, 2, out / "plain.jsonl")
    return [
        Figure(
            "scenerevis reverse chains, 1,000 rooms, no images (2 processes)",
            pool_s,
            baseline="same work in one process",
            baseline_seconds=serial_s,
            target_seconds=60.0,
            extra={"rooms": len(rooms), "real_rooms": n_real, "chains": stats.chains, "edit_turns": stats.turns,
                   "chains_per_s": round(stats.chains / pool_s, 1), "pool_equals_serial_bytes": same,
                   "pool_runs_s": [round(x, 2) for x in pool_runs],
                   "serial_runs_s": [round(x, 2) for x in serial_runs]},
        ),
        Figure(
            "scenerevis reverse chains with images (2 processes)",
            img_s,
            baseline="same rooms without images",
            baseline_seconds=plain_s,
            extra={"rooms": len(few), "chains": img_stats.chains, "images": img_stats.images,
                   "images_per_s": round(img_stats.images / img_s, 2),
                   "rooms_per_s": round(len(few) / img_s, 3),
                   "est_1000_rooms_h": round(img_s / len(few) * N_ROOMS / 3600, 2)},
        ),
    ]


if __name__ == "__main__":
    for fig in run():
        print(fig.to_dict())
