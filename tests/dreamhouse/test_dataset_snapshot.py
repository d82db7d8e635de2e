"""Speed work must not change the dataset files (issue 24): a small dataset written in both
formats, and the structures read back from it, hash exactly as recorded in
``fixtures/dataset_snapshot.json``.

Rebuild the record only for an intended change of results (a new ``GENERATOR_VERSION``, a
new record layout): ``.venv/bin/python tests/dreamhouse/test_dataset_snapshot.py --update``.
Parquet bytes also depend on the pyarrow that wrote them (its version is in the file), so
they are compared only under the pyarrow that recorded them; the rows read back always are.
The generated transforms (LAPACK's SVD for near-rotations) differ in their last bits between CPU
classes (``buildbench.numeric_platform``), and the files keep every bit: the files', rows' and
read-back digests are kept per class (``--update add-platform`` adds this machine's once the
member counts agree); the member counts are compared everywhere.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from buildbench.numeric_platform import numeric_platform
from buildbench.suites.dreamhouse.generate import (
    PAPER_DATASET_SIZE,
    dataset_task_ids,
    read_dataset,
    write_dataset,
)
from buildbench.suites.dreamhouse.generate.dataset import StoredHouse

SNAPSHOT = Path(__file__).parent / "fixtures" / "dataset_snapshot.json"
_IDS = dataset_task_ids(PAPER_DATASET_SIZE)
#: Six houses over different styles, configurations and sizes.
SAMPLE = [_IDS[4409 * k % len(_IDS)] for k in range(6)]


def _digest(*parts: Any) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.tobytes() if isinstance(p, np.ndarray) else json.dumps(p, sort_keys=True).encode())
    return h.hexdigest()


def _house_digest(h: StoredHouse) -> str:
    parts: list[Any] = [h.task_id, h.params_json]
    for s in (h.structure, h.skin):
        parts += [list(s.names), s.sizes_m, s.matrices, list(s.phases), list(s.sections),
                  [list(x) for x in s.supported_by], s.meta]
    return _digest(*parts)


def dataset_digests(fmt: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        manifest = write_dataset(tmp, 0, fmt=fmt, workers=1, task_ids=SAMPLE)
        out: dict[str, Any] = {"files": {f["path"]: f["sha256"] for f in manifest["files"]}}
        out["member_counts"] = manifest["member_counts"]
        if fmt == "parquet":
            out["pyarrow"] = pa.__version__
            out["rows"] = [_digest(pq.read_table(Path(tmp) / f["path"]).to_pylist()) for f in manifest["files"]]
        out["read_back"] = [_house_digest(h) for h in read_dataset(tmp)]
    return out


def _recorded() -> dict[str, Any]:
    return json.loads(SNAPSHOT.read_text())


_STABLE = ("member_counts", "pyarrow")  # the same on every CPU class


def _split(digests: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(what every CPU class writes alike, what carries the class's last bits)."""
    return ({k: v for k, v in digests.items() if k in _STABLE}, {k: v for k, v in digests.items() if k not in _STABLE})


def test_jsonl_dataset_is_unchanged(platform_bits: Any) -> None:
    stable, bits = _split(dataset_digests("jsonl"))
    recorded = _recorded()["jsonl"]
    assert stable == recorded["stable"]
    platform_bits(recorded["by_cpu"], bits, "jsonl dataset files and houses read back")


def test_parquet_dataset_is_unchanged(platform_bits: Any) -> None:
    stable, bits = _split(dataset_digests("parquet"))
    recorded = _recorded()["parquet"]
    by_cpu = recorded["by_cpu"]
    if stable["pyarrow"] != recorded["stable"]["pyarrow"]:
        # Another pyarrow writes other bytes for the same rows; the rows must still match.
        bits.pop("files")
        by_cpu = {cls: {k: v for k, v in d.items() if k != "files"} for cls, d in by_cpu.items()}
        stable.pop("pyarrow"), recorded["stable"].pop("pyarrow")
    assert stable == recorded["stable"]
    platform_bits(by_cpu, bits, "parquet dataset files, rows and houses read back")


if __name__ == "__main__" and sys.argv[1:2] == ["--update"]:
    fresh = {f: _split(dataset_digests(f)) for f in ("jsonl", "parquet")}
    if sys.argv[2:] == ["add-platform"]:
        record = _recorded()
        for f, (stable, bits) in fresh.items():
            if stable != record[f]["stable"]:
                sys.exit(f"error: the {f} member counts or pyarrow differ from the snapshot: not a CPU-class difference")
            record[f]["by_cpu"][numeric_platform()] = bits
    else:
        record = {f: {"stable": stable, "by_cpu": {numeric_platform(): bits}} for f, (stable, bits) in fresh.items()}
    SNAPSHOT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {SNAPSHOT}")
