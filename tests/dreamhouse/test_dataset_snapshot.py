"""Speed work must not change the dataset files (issue 24): a small dataset written in both
formats, and the structures read back from it, hash exactly as recorded in
``fixtures/dataset_snapshot.json``.

Rebuild the record only for an intended change of results (a new ``GENERATOR_VERSION``, a
new record layout): ``.venv/bin/python tests/dreamhouse/test_dataset_snapshot.py --update``.
Parquet bytes also depend on the pyarrow that wrote them (its version is in the file), so
they are compared only under the pyarrow that recorded them; the rows read back always are.
The files keep every bit of the generated transforms, and those are the same on every CPU class
(the model's arithmetic calls no BLAS or LAPACK: ``model/rigid.py``), so one record holds for
every machine.
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


def test_jsonl_dataset_is_unchanged() -> None:
    assert dataset_digests("jsonl") == _recorded()["jsonl"]


def test_parquet_dataset_is_unchanged() -> None:
    got, recorded = dataset_digests("parquet"), _recorded()["parquet"]
    if got["pyarrow"] != recorded["pyarrow"]:
        # Another pyarrow writes other bytes for the same rows; the rows must still match.
        for d in (got, recorded):
            d.pop("files"), d.pop("pyarrow")
    assert got == recorded


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    SNAPSHOT.write_text(json.dumps({f: dataset_digests(f) for f in ("jsonl", "parquet")}, indent=1) + "\n")
    print(f"wrote {SNAPSHOT}")
