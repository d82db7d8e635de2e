"""Fuzz the BuildArena geometry library (both profiles) with odd call sequences, looking for native crashes.

A developer tool, run with the project's environment::

    nice .venv/bin/python tools/buildarena_fuzz.py --calls 1000000 --seed 0

Each profile (``released``, ``default``) replays seeded sequences of
``tools/buildarena_oracle/odd_calls.OddCallGenerator`` (every operation, odd
ids, faces, vectors and angles, huge and tiny numbers) until it has made
``--calls`` calls. The sequences run in child processes, a batch at a time,
under ``faulthandler``: a child that dies of a signal (a segmentation fault
in python-fcl, say) is reported with its seed, and that seed is run again
alone, printing each call before making it, to name the call and keep the
native traceback. An exception escaping ``call`` (which must answer every
call with text) is reported too. The run goes on after either.

Exit status 0 when nothing was found, 1 otherwise; a JSON summary is the last
line of the output (``calls``, ``sequences``, ``crashes``, ``escaped`` per
profile).
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "buildarena_oracle"))
from generate import View  # noqa: E402
from odd_calls import OddCallGenerator  # noqa: E402

PROFILES = ("released", "default")


def _session(profile: str) -> Any:
    from buildbench.suites.buildarena.library import Workbench
    from buildbench.suites.buildarena.library.released import ReleasedWorkbench

    return ReleasedWorkbench() if profile == "released" else Workbench()


def view(bench: Any, profile: str) -> View:
    """What the generator may know of a session's state (either profile)."""
    if profile == "released":
        machine = bench.machine
        faces = {key: list(part.faces) for key, part in machine.blocks.items()}
        powered = [key for key, part in machine.blocks.items() if part.locomotion]
        keys = sorted({k for key in powered for ks in machine.blocks[key].locomotion.values() for k in ks})
        return View(bool(machine.started), faces, powered, keys, len(machine.sequence))
    from buildbench.suites.buildarena.catalogue import load_catalogue

    specs = load_catalogue().specs
    machine = bench.machine
    faces = {key: [f.label for f in specs[b.type].faces] if b.type in specs else [] for key, b in machine.blocks.items()}
    powered = [key for key, b in machine.blocks.items() if b.keys]
    keys = sorted({k for b in machine.blocks.values() for ks in b.keys.values() for k in ks})
    return View(bool(machine.started), faces, powered, keys, len(machine.control_sequence))


def work(profile: str, first: int, end: int, trace: bool) -> None:
    """Child: run seeds ``first:end``; ``seq SEED CALLS_SO_FAR`` before each sequence (``call ...`` before each call with
    ``trace``), an ``escaped`` JSON line per exception that left ``call``, ``done CALLS`` at the end."""
    faulthandler.enable()
    calls = 0
    for seed in range(first, end):
        print(f"seq {seed} {calls}", flush=True)
        bench = _session(profile)
        gen = OddCallGenerator(seed)
        for index in range(gen.length):
            op, params = gen.next_call(view(bench, profile), index)
            params = json.loads(json.dumps(params))  # what a tool call can carry
            if trace:
                print(f"call {index} {op} {json.dumps(params)}", flush=True)
            try:
                bench.call(op, params)
            except Exception as exc:  # noqa: BLE001 - the finding this tool reports
                print("escaped " + json.dumps({"profile": profile, "seed": seed, "index": index, "op": op,
                                               "params": params, "error": f"{type(exc).__name__}: {exc}"}),
                      flush=True)
                bench = _session(profile)
            calls += 1
    print(f"done {calls}", flush=True)


def _child(profile: str, first: int, end: int, trace: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", profile, "--seeds", f"{first}:{end}"]
    return subprocess.run(command + ["--trace"] * trace, capture_output=True, text=True, check=False)


def fuzz(profile: str, calls: int, seed: int, batch: int, log: Any) -> dict[str, Any]:
    """Run ``profile`` from ``seed`` on until ``calls`` calls were made; findings per crash and escape."""
    made, sequences, crashes, escaped = 0, 0, [], []
    start = seed
    began = time.monotonic()
    while made < calls:
        result = _child(profile, start, start + batch)
        lines = result.stdout.splitlines()
        escaped += [json.loads(line[len("escaped "):]) for line in lines if line.startswith("escaped ")]
        done = [line for line in lines if line.startswith("done ")]
        if result.returncode == 0 and done:
            made += int(done[-1].split()[1])
            sequences += batch
            start += batch
        else:
            crashed, before = max(tuple(int(x) for x in line.split()[1:3]) for line in lines if line.startswith("seq "))
            crash = _locate(profile, crashed, result)
            crashes.append(crash)
            print(f"{profile}: CRASH {json.dumps(crash)[:2000]}", file=log, flush=True)
            sequences += crashed - start + 1
            made += before + crash.get("index", 0) + 1
            start = crashed + 1
        print(f"{profile}: {made} calls, {sequences} sequences, {len(crashes)} crashes, {len(escaped)} escaped, "
              f"{time.monotonic() - began:.0f} s", file=log, flush=True)
    return {"calls": made, "sequences": sequences, "seeds": f"{seed}:{start}", "crashes": crashes,
            "escaped": escaped}


def _locate(profile: str, seed: int, first: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The crashing call of ``seed``: run it alone, each call printed before it is made."""
    rerun = _child(profile, seed, seed + 1, trace=True)
    last = [line for line in rerun.stdout.splitlines() if line.startswith("call ")]
    crash: dict[str, Any] = {"profile": profile, "seed": seed, "returncode": first.returncode,
                             "reproduced": rerun.returncode != 0, "traceback": first.stderr[-3000:]}
    if last and rerun.returncode != 0:
        _, index, op, params = last[-1].split(" ", 3)
        crash.update(index=int(index), op=op, params=json.loads(params), traceback=rerun.stderr[-3000:])
    return crash


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1_000_000, help="calls per profile")
    parser.add_argument("--seed", type=int, default=0, help="first sequence seed")
    parser.add_argument("--batch", type=int, default=100, help="sequences per child process")
    parser.add_argument("--profiles", default=",".join(PROFILES))
    parser.add_argument("--worker", choices=PROFILES, help=argparse.SUPPRESS)
    parser.add_argument("--seeds", help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        first, end = (int(x) for x in args.seeds.split(":"))
        work(args.worker, first, end, args.trace)
        return
    summary = {}
    for profile in args.profiles.split(","):
        if profile not in PROFILES:
            parser.error(f"unknown profile {profile!r}")
        summary[profile] = fuzz(profile, args.calls, args.seed, args.batch, sys.stderr)
    print(json.dumps(summary))
    sys.exit(1 if any(s["crashes"] or s["escaped"] for s in summary.values()) else 0)


if __name__ == "__main__":
    main()
