"""Fuzz the BuildArena geometry library (both profiles) with odd call sequences, looking for native crashes.

A developer tool, run with the project's environment::

    nice .venv/bin/python tools/buildarena_fuzz.py --calls 1000000 --seed 0

Each profile (``released``, ``default``) replays seeded sequences of
``tools/buildarena_oracle/odd_calls.OddCallGenerator`` (every operation, odd
ids, faces, vectors and angles, huge and tiny numbers) until it has made
``--calls`` calls; with ``--assembly``, ``OddAssemblyGenerator`` sequences
instead (2-3 machines saved with ``to_file``, then an assembly of them with
``add_machine``, ``shift_machine``, ``rotate_machine``, ``remove_machine`` and
the block operations). The sequences run in child processes, a batch at a time,
under ``faulthandler``: a child that dies of a signal (a segmentation fault
in python-fcl, say) or hangs is reported with its seed, and that seed is run again
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
from generate import AssemblyView, View  # noqa: E402
from odd_calls import OddAssemblyGenerator, OddCallGenerator  # noqa: E402

PROFILES = ("released", "default")
HANG_SECONDS = 1800
"""A child still running after this long (a batch takes a few minutes) is killed and reported as hung."""


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


def _assembly_view(bench: Any, profile: str, saved: list[str]) -> AssemblyView:
    base = view(bench, profile)
    letters = bench.machine.machines if profile == "released" else bench.machine.substructures
    return AssemblyView(base.started, base.faces, base.powered, base.keys, base.sequence_length,
                        substructures=list(letters), saved=list(saved))


class _Sequence:
    """One seed's calls on fresh sessions: ``call`` runs, traces and reports an escaping exception."""

    def __init__(self, profile: str, seed: int, trace: bool) -> None:
        self.profile, self.seed, self.trace = profile, seed, trace
        self.calls = 0
        self.escaped = False

    def call(self, bench: Any, op: str, params: dict[str, Any], session: str = "machine") -> None:
        params = json.loads(json.dumps(params))  # what a tool call can carry
        if self.trace:
            print(f"call {self.calls} {op} {json.dumps(params)}", flush=True)
        try:
            bench.call(op, params)
        except Exception as exc:  # noqa: BLE001 - the finding this tool reports
            self.escaped = True
            print("escaped " + json.dumps({"profile": self.profile, "seed": self.seed, "session": session,
                                           "index": self.calls, "op": op, "params": params,
                                           "error": f"{type(exc).__name__}: {exc}"}), flush=True)
        self.calls += 1

    def machine(self) -> None:
        """An ``OddCallGenerator`` sequence on one machine session."""
        bench = _session(self.profile)
        gen = OddCallGenerator(self.seed)
        for index in range(gen.length):
            op, params = gen.next_call(view(bench, self.profile), index)
            self.call(bench, op, params)
            if self.escaped:  # a fresh session, as an agent's next episode would get
                bench, self.escaped = _session(self.profile), False

    def assembly(self) -> None:
        """An ``OddAssemblyGenerator`` sequence: machines saved with ``to_file``, then an assembly of them."""
        from buildbench.suites.buildarena.library import Workbench
        from buildbench.suites.buildarena.library.released import ReleasedWorkspace
        from buildbench.suites.buildarena.model import Machine

        gen = OddAssemblyGenerator(self.seed)
        workspace = ReleasedWorkspace()
        kept: dict[str, Machine] = {}
        saved: list[str] = []
        for name, length in zip(gen.machine_names, gen.machine_lengths, strict=True):
            bench = workspace.session(name) if self.profile == "released" else Workbench()
            for index in range(length):
                op, params = gen.machine_call(view(bench, self.profile), index, length, name)
                self.call(bench, op, params, name)
                if op == "to_file":
                    kept[name] = bench.machine
                    saved.append(name)
                if self.escaped:
                    return
        bench = (workspace.session("assembly", "assembly") if self.profile == "released"
                 else Workbench(Machine(is_assembly=True), saved=kept))
        for _ in range(gen.length):
            op, params = gen.assembly_call(_assembly_view(bench, self.profile, saved))
            self.call(bench, op, params, "assembly")
            if self.escaped:
                return


def work(profile: str, first: int, end: int, trace: bool, assembly: bool = False) -> None:
    """Child: run seeds ``first:end``; ``seq SEED CALLS_SO_FAR`` before each sequence (``call ...`` before each call
    with ``trace``), an ``escaped`` JSON line per exception that left ``call``, ``done CALLS`` at the end."""
    faulthandler.enable()
    calls = 0
    for seed in range(first, end):
        print(f"seq {seed} {calls}", flush=True)
        sequence = _Sequence(profile, seed, trace)
        sequence.assembly() if assembly else sequence.machine()
        calls += sequence.calls
    print(f"done {calls}", flush=True)


def _child(profile: str, first: int, end: int, trace: bool = False,
           assembly: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", profile, "--seeds", f"{first}:{end}"]
    command += ["--trace"] * trace + ["--assembly"] * assembly
    try:
        return subprocess.run(command, capture_output=True, text=True, check=False, timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired as exc:  # a hang is a finding too: reported like a crash
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        return subprocess.CompletedProcess(command, -9, out, err + f"\nhung: killed after {HANG_SECONDS} s")


def fuzz(profile: str, calls: int, seed: int, batch: int, log: Any, assembly: bool = False) -> dict[str, Any]:
    """Run ``profile`` from ``seed`` on until ``calls`` calls were made; findings per crash and escape."""
    made, sequences, crashes, escaped = 0, 0, [], []
    start = seed
    began = time.monotonic()
    while made < calls:
        result = _child(profile, start, start + batch, assembly=assembly)
        lines = result.stdout.splitlines()
        escaped += [json.loads(line[len("escaped "):]) for line in lines if line.startswith("escaped ")]
        done = [line for line in lines if line.startswith("done ")]
        if result.returncode == 0 and done:
            made += int(done[-1].split()[1])
            sequences += batch
            start += batch
        else:
            crashed, before = max((tuple(int(x) for x in line.split()[1:3]) for line in lines if line.startswith("seq ")),
                                  default=(start, 0))
            crash = _locate(profile, crashed, result, assembly)
            crashes.append(crash)
            print(f"{profile}: CRASH {json.dumps(crash)[:2000]}", file=log, flush=True)
            sequences += crashed - start + 1
            made += before + crash.get("index", 0) + 1
            start = crashed + 1
        print(f"{profile}: {made} calls, {sequences} sequences, {len(crashes)} crashes, {len(escaped)} escaped, "
              f"{time.monotonic() - began:.0f} s", file=log, flush=True)
    return {"calls": made, "sequences": sequences, "seeds": f"{seed}:{start}", "crashes": crashes,
            "escaped": escaped}


def _locate(profile: str, seed: int, first: subprocess.CompletedProcess[str], assembly: bool) -> dict[str, Any]:
    """The crashing call of ``seed``: run it alone, each call printed before it is made."""
    rerun = _child(profile, seed, seed + 1, trace=True, assembly=assembly)
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
    parser.add_argument("--assembly", action="store_true",
                        help="assembly sequences (machines saved with to_file, then add_machine ...) instead")
    parser.add_argument("--worker", choices=PROFILES, help=argparse.SUPPRESS)
    parser.add_argument("--seeds", help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        first, end = (int(x) for x in args.seeds.split(":"))
        work(args.worker, first, end, args.trace, args.assembly)
        return
    summary = {}
    for profile in args.profiles.split(","):
        if profile not in PROFILES:
            parser.error(f"unknown profile {profile!r}")
        summary[profile] = fuzz(profile, args.calls, args.seed, args.batch, sys.stderr, args.assembly)
    print(json.dumps(summary))
    sys.exit(1 if any(s["crashes"] or s["escaped"] for s in summary.values()) else 0)


if __name__ == "__main__":
    main()
