"""Drive the unmodified released BuildArena library with generated calls and record its answers.

Run with the oracle's own Python 3.12 environment (see README.md), for example::

    ORIG=/tmp/ba_orig PYTHONHASHSEED=0 /tmp/ba_venv/bin/python run_original.py \
        --orig $ORIG --seeds 0:200 --out differential-dev.jsonl

One JSON line per sequence, in the ``golden-dev.jsonl`` format: ``seed``, ``calls`` (``op``,
``params``, ``result`` or ``exception`` as ``"Type: message"``, ``ids_after``) and a compact
``final`` state (block order, virtual positions, wxyz quaternions, free faces, uid, started).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from edge_calls import EdgeAssemblyGenerator, EdgeCallGenerator  # noqa: E402
from generate import AssemblyGenerator, AssemblyView, CallGenerator, View  # noqa: E402
from odd2_calls import Odd2AssemblyGenerator, Odd2CallGenerator  # noqa: E402
from odd3_calls import Odd3AssemblyGenerator, Odd3CallGenerator  # noqa: E402
from odd_calls import OddCallGenerator  # noqa: E402


def _view(machine: Any) -> View:
    faces = {key: list(block.faces) for key, block in machine.blocks.items()}
    powered = [key for key, block in machine.blocks.items() if block.locomotion]
    keys = sorted({k for block in machine.blocks.values() if block.locomotion for ks in block.locomotion.values()
                   for k in ks})
    return View(bool(machine.started), faces, powered, keys, len(machine.control_sequence))


def _assembly_view(assembly: Any, saved: list[str]) -> AssemblyView:
    base = _view(assembly)
    return AssemblyView(base.started, base.faces, base.powered, base.keys, base.sequence_length,
                        substructures=list(assembly.machines), saved=list(saved))


def _call(target: Any, op: str, params: dict[str, Any]) -> dict[str, Any]:
    record: dict[str, Any] = {"op": op, "params": params}
    try:
        record["result"] = getattr(target, op)(**json.loads(json.dumps(params)))
    except Exception as exc:  # the original's crashes are part of its behaviour
        record["exception"] = f"{type(exc).__name__}: {exc}"
    return record


def run_assembly(machine_cls: Any, assembly_cls: Any, seed: int, edge: bool = False,
                 odd2: bool = False, odd3: bool = False) -> dict[str, Any]:
    """Machines built and saved with ``to_file``, then an assembly of them (run in a fresh folder)."""
    gen = (Odd3AssemblyGenerator(seed) if odd3 else Odd2AssemblyGenerator(seed) if odd2
           else EdgeAssemblyGenerator(seed) if edge else AssemblyGenerator(seed))
    sessions, saved = [], []
    for name, length in zip(gen.machine_names, gen.machine_lengths, strict=True):
        machine = machine_cls(name=name)
        calls = []
        for index in range(length):
            op, params = gen.machine_call(_view(machine), index, length, name)
            record = _call(machine, op, params)
            if op == "to_file" and "exception" not in record:
                written = Path(params["output_dir"]) / f"{name}.json"
                record["written"] = json.loads(written.read_text(encoding="utf-8"))
                saved.append(name)
            record["ids_after"] = list(machine.blocks)
            calls.append(record)
        sessions.append({"name": name, "kind": "machine", "calls": calls})
    assembly = assembly_cls(name="assembly")
    calls = []
    for _ in range(gen.length):
        op, params = gen.assembly_call(_assembly_view(assembly, saved))
        record = _call(assembly, op, params)
        record["ids_after"] = list(assembly.blocks)
        calls.append(record)
    sessions.append({"name": "assembly", "kind": "assembly", "calls": calls})
    return {"seed": seed, "kind": "assembly", "sessions": sessions, "final": _final(assembly)}


def _final(machine: Any) -> dict[str, Any]:
    blocks = []
    for key, block in machine.blocks.items():
        q = block.geo.rotation.quat
        blocks.append({
            "key": key, "name": block.name,
            "position_virtual": [float(v) for v in block.geo.position.virtual],
            "rotation_quat_wxyz": [float(q.w), float(q.x), float(q.y), float(q.z)],
            "flipped": bool(block.flipped),
            "free_faces": [label for label, face in block.faces.items() if face.sticky],
        })
    return {"started": bool(machine.started), "uid": machine.uid, "block_order": list(machine.blocks),
            "blocks": blocks, "control_sequence": list(machine.control_sequence)}


def run_sequence(machine_cls: Any, seed: int, workdir: str, odd: bool = False, edge: bool = False,
                 odd2: bool = False, odd3: bool = False) -> dict[str, Any]:
    machine = machine_cls(name=f"seq{seed}", db_path=os.path.join(workdir, f"seq{seed}", "db"))
    gen = (Odd3CallGenerator(seed) if odd3 else Odd2CallGenerator(seed) if odd2 else EdgeCallGenerator(seed) if edge
           else OddCallGenerator(seed) if odd else CallGenerator(seed))
    calls = []
    for index in range(gen.length):
        op, params = gen.next_call(_view(machine), index)
        record: dict[str, Any] = {"op": op, "params": params}
        try:
            record["result"] = getattr(machine, op)(**json.loads(json.dumps(params)))
        except Exception as exc:  # the original's crashes are part of its behaviour
            record["exception"] = f"{type(exc).__name__}: {exc}"
        record["ids_after"] = list(machine.blocks)
        calls.append(record)
    return {"seed": seed, "calls": calls, "final": _final(machine)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orig", required=True, help="checkout of the original repository at the pinned commit")
    parser.add_argument("--seeds", required=True,
                        help="FIRST:END (END excluded), or a file of seeds one a line (compare.py --differing-seeds)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--assembly", action="store_true",
                        help="record assembly sequences (machines saved with to_file, then add_machine ...)")
    parser.add_argument("--odd", action="store_true", help="odd_calls.OddCallGenerator's sequences")
    parser.add_argument("--edge", action="store_true", help="edge_calls.EdgeCallGenerator's sequences")
    parser.add_argument("--odd2", action="store_true",
                        help="odd2_calls.Odd2CallGenerator's sequences (with --assembly, Odd2AssemblyGenerator's)")
    parser.add_argument("--odd3", action="store_true", help="odd3_calls.Odd3CallGenerator's sequences (with --assembly, Odd3AssemblyGenerator's)")
    parser.add_argument("--isolate", action="store_true",
                        help="run in a child process; a seed that kills it is reported and skipped")
    args = parser.parse_args()
    seeds = _seeds(args.seeds)
    if args.isolate:
        isolate(args, seeds)
        return
    os.chdir(args.orig)  # the original reads ./blocks/configs
    sys.path.insert(0, args.orig)
    from spatial.build import Assembly, Machine

    out = Path(args.out).resolve()
    with tempfile.TemporaryDirectory() as workdir, out.open("w", encoding="utf-8") as fh:
        for seed in seeds:
            if args.assembly:
                # The original saves and finds machines under ./datacache/default (its default paths).
                folder = Path(workdir) / f"asm{seed}"
                (folder / "datacache" / "default" / "machine").mkdir(parents=True)
                (folder / "blocks").symlink_to(Path(args.orig).resolve() / "blocks")  # read on every Machine()
                os.chdir(folder)
                fh.write(json.dumps(run_assembly(Machine, Assembly, seed, edge=args.edge, odd2=args.odd2,
                                                     odd3=args.odd3)) + "\n")
            else:
                fh.write(json.dumps(run_sequence(Machine, seed, workdir, odd=args.odd, edge=args.edge,
                                                 odd2=args.odd2, odd3=args.odd3)) + "\n")
            fh.flush()


def _seeds(spec: str) -> list[int]:
    """``FIRST:END`` or the name of a file listing seeds."""
    if ":" in spec and not Path(spec).is_file():
        first, end = (int(x) for x in spec.split(":"))
        return list(range(first, end))
    return [int(line) for line in Path(spec).read_text(encoding="utf-8").split()]


def isolate(args: argparse.Namespace, seeds: list[int]) -> None:
    """Record ``seeds`` in child processes; a seed whose child dies of a signal is left out and named."""
    out = Path(args.out).resolve()
    out.write_text("", encoding="utf-8")
    position = 0
    while position < len(seeds):
        part = out.with_suffix(".part")
        rest = out.with_suffix(".seeds")
        rest.write_text("".join(f"{seed}\n" for seed in seeds[position:]), encoding="utf-8")
        command = [sys.executable, str(Path(__file__).resolve()), "--orig", args.orig, "--seeds", str(rest),
                   "--out", str(part)] + ["--odd"] * args.odd + ["--edge"] * args.edge + ["--assembly"] * args.assembly \
            + ["--odd2"] * args.odd2 + ["--odd3"] * args.odd3
        code = subprocess.run(command, check=False).returncode
        lines = part.read_text(encoding="utf-8").splitlines(keepends=True) if part.exists() else []
        done = [line for line in lines if line.endswith("\n")]
        with out.open("a", encoding="utf-8") as fh:
            fh.writelines(done)
        position += len(done)
        if code == 0 or position == len(seeds):
            break
        print(f"seed {seeds[position]}: the original's process ended with code {code}; seed left out", file=sys.stderr)
        position += 1
    out.with_suffix(".part").unlink(missing_ok=True)
    out.with_suffix(".seeds").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
