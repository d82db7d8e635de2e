"""Record the original library's answers to fixed, hand-written call sequences.

Run with the oracle's own Python 3.12 environment (see README.md), for example::

    cd /tmp && PYTHONHASHSEED=0 /tmp/oracle/venv/bin/python /work/main/tools/buildarena_oracle/record_fixed.py \
        --orig /tmp/oracle/orig --calls tests/buildarena/data/differential-connector-faces.jsonl \
        --out /tmp/differential-connector-faces.jsonl

``--calls`` is a JSON-lines file of sequences in the ``run_original.py --assembly`` format
(``seed``, ``sessions`` with ``name``, ``kind`` = ``machine`` or ``assembly`` and ``calls`` with
``op`` and ``params``); answers already in it are ignored. Each sequence runs in a fresh folder
(machines are saved with ``to_file`` where the original's ``add_machine`` reads them) and is written
back with the original's answers (``result`` or ``exception``, ``ids_after``, ``written`` for a
``to_file``) and a compact ``final`` state.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_original import _call, _final  # noqa: E402


def run_fixed(machine_cls: Any, assembly_cls: Any, sequence: dict[str, Any]) -> dict[str, Any]:
    """The original's answers to every call of ``sequence`` (run in the current folder)."""
    sessions, last = [], None
    for session in sequence["sessions"]:
        name = session["name"]
        target = assembly_cls(name=name) if session["kind"] == "assembly" else machine_cls(name=name)
        calls = []
        for given in session["calls"]:
            record = _call(target, given["op"], given["params"])
            if given["op"] == "to_file" and "exception" not in record:
                written = Path(given["params"]["output_dir"]) / f"{name}.json"
                record["written"] = json.loads(written.read_text(encoding="utf-8"))
            record["ids_after"] = list(target.blocks)
            calls.append(record)
        sessions.append({"name": name, "kind": session["kind"], "calls": calls})
        last = target
    return {"seed": sequence["seed"], "kind": "assembly", "sessions": sessions, "final": _final(last)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orig", required=True, help="checkout of the original repository at the pinned commit")
    parser.add_argument("--calls", required=True, type=Path, help="sequences to run (JSON lines)")
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    sequences = [json.loads(line) for line in args.calls.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = args.out.resolve()
    os.chdir(args.orig)  # the original reads ./blocks/configs
    sys.path.insert(0, args.orig)
    from spatial.build import Assembly, Machine

    with tempfile.TemporaryDirectory() as workdir, out.open("w", encoding="utf-8") as fh:
        for index, sequence in enumerate(sequences):
            folder = Path(workdir) / f"seq{index}"
            (folder / "datacache" / "default" / "machine").mkdir(parents=True)
            (folder / "blocks").symlink_to(Path(args.orig).resolve() / "blocks")  # read on every Machine()
            os.chdir(folder)
            fh.write(json.dumps(run_fixed(Machine, Assembly, sequence)) + "\n")


if __name__ == "__main__":
    main()
