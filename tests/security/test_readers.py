"""Every file-reading command against files that are not files: ``/dev/zero`` (size 0, endless),
a FIFO (blocks ``open`` forever), a folder, and a file over a small configured cap. Each must
end with one ``error:`` line naming the file, exit status 2, no traceback, within seconds.

Each command runs in its own process under a memory limit (an unbounded read of ``/dev/zero``
would otherwise take the test machine's memory) and a timeout (a blocking read would hang);
the four attack files run in that one process, one after the other, through the CLI's ``main``.

"Within seconds" is measured as the attack's wall time less the time its process waited for a CPU
(the run-queue delay the kernel keeps in ``/proc/self/schedstat``): a read that spins shows as CPU
time, a read that blocks (a FIFO) as time off the run queue, and neither grows with the load of a
shared test machine, where the bare wall time of one attack passed 30 s at load ~21.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The cap the "oversized" case runs under, for every byte limit, and the file that passes it.
CAP = 32768
LIMIT_ENV = {f"BUILDBENCH_LIMIT_{name}": str(CAP) for name in ("JSON_FILE_BYTES", "INPUT_FILE_BYTES", "LINE_BYTES")}
KINDS = ("dev-zero", "fifo", "folder", "oversized")  # in this order: the caps are set for the last only

#: command -> (argv with {f} for the attack file and {tmp} for a scratch folder, the attack file's suffix)
COMMANDS: dict[str, tuple[list[str], str]] = {
    "scenerevis metrics": (["scenerevis", "metrics", "{f}"], ".jsonl"),
    "scenerevis reverse": (["scenerevis", "reverse", "{f}", "--out", "{tmp}/rev", "--no-images"], ".jsonl"),
    "scenerevis goals": (["scenerevis", "goals", "{f}", "--out", "{tmp}/goals.jsonl"], ".jsonl"),
    "scenerevis export": (["scenerevis", "export", "{f}", "--out", "{tmp}/export"], ".jsonl"),
    "scenerevis apply": (["scenerevis", "apply", "{f}", "{tmp}/reply.txt"], ".json"),
    "bimedit score --task": (["bimedit", "score", "--task", "{f}", "--pred", "{tmp}/pred.ifc"], ".jsonl"),
    "bimedit diff": (["bimedit", "diff", "{f}", "{f}"], ".ifc"),
    "buildarena replay": (["buildarena", "replay", "{f}"], ".jsonl"),
    "buildarena replay (gzip)": (["buildarena", "replay", "{f}"], ".jsonl.gz"),
    "buildarena simulate": (["buildarena", "simulate", "{f}", "--task", "transport-1"], ".json"),
    "buildarena levels": (["buildarena", "levels", "{f}"], ".yaml"),
    "run --tasks": (["run", "example", "--tasks", "{f}", "--run-dir", "{tmp}/run", "-q"], ".jsonl"),
    "run --replay": (["run", "example", "--model", "openai:gpt-4o", "--replay", "{f}", "--run-dir", "{tmp}/run"],
                     ".jsonl"),
    "dreamhouse validate": (["dreamhouse", "validate", "{f}"], ".json"),
    "dreamhouse validate (shard)": (["dreamhouse", "validate", "{f}"], ".jsonl"),
    "dreamhouse render": (["dreamhouse", "render", "{f}", "--out", "{tmp}/render"], ".json"),
    "dreamhouse unpack": (["dreamhouse", "unpack", "{f}", "--out", "{tmp}/unpack"], ".dhpack"),
    "legoeval evaluate --scene": (["legoeval", "evaluate", "--scene", "{f}", "--constraints", "{tmp}/c.txt"],
                                  ".json"),
    "scenes export": (["scenes", "export", "{f}", "--out", "{tmp}/meshes"], ".jsonl"),
    "dreamhouse render --skin": (["dreamhouse", "render", str(REPO / "examples/files/house.json"), "--skin", "{f}",
                                  "--out", "{tmp}/render"], ".json"),
    "report --prices": (["report", "{tmp}/no-run", "--prices", "{f}"], ".yaml"),
    "buildarena simulate --physics": (["buildarena", "simulate", str(REPO / "examples/files/machine.json"),
                                       "--task", "transport-1", "--physics", "{f}"], ".toml"),
    "buildarena analyze": (["buildarena", "analyze", "{f}", "--machine", str(REPO / "examples/files/machine.json"),
                            "--task", "transport-1"], ".csv"),
    "dreamhouse serve --dhpack": (["dreamhouse", "serve", "--port", "0", "--dhpack", "{f}"], ".dhpack"),
    "dreamhouse serve --tasks": (["dreamhouse", "serve", "--port", "0", "--tasks", "{f}"], ".jsonl"),
    "legoeval tool --scene": (["legoeval", "tool", "get_room_info", "--scene", "{f}"], ".json"),
    "legoeval evaluate --constraints": (["legoeval", "evaluate", "--scene", str(
        REPO / "tests/legoeval/fixtures/generator_scenes/flat_without_tv.json"), "--constraints", "{f}"], ".txt"),
}

#: Seconds an attack may take, not counting the time its process waited for a CPU.
BUDGET_S = 30
#: Seconds the child with all four attacks may take on the wall clock: only a hang check (at load
#: ~25 on 2 cores a process gets about a twelfth of a CPU); the pytest timeout is above it.
HANG_S = 280

#: Runs in the child: each attack file through ``main``, one JSON line per attack: its wall
#: seconds ``s``, and ``waited``, the seconds this process's main thread was runnable but not run.
DRIVER = r"""
import contextlib, io, json, os, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

def waited():
    try:
        with open("/proc/self/schedstat") as f:  # on-CPU ns, run-queue delay ns, time slices
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):  # no scheduler statistics: the bare wall time counts
        return 0.0

from buildbench.cli.main import main
for kind, argv, env in json.loads(sys.argv[1]):
    os.environ.update(env)
    err = io.StringIO()
    t0, w0 = time.monotonic(), waited()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = exc.code
    s, w = time.monotonic() - t0, waited() - w0
    print(json.dumps({"kind": kind, "rc": rc, "stderr": err.getvalue(), "s": s, "waited": w}), flush=True)
"""


def _attack_files(tmp: Path, suffix: str) -> dict[str, Path]:
    files = {kind: tmp / f"{kind}{suffix}" for kind in KINDS}
    files["dev-zero"].symlink_to("/dev/zero")  # a name with the right suffix, as a user could make
    os.mkfifo(files["fifo"])
    files["folder"].mkdir()
    (files["folder"] / f"inside{suffix}").write_text("{}\n")  # a folder that holds a file of the kind
    files["oversized"].write_bytes(b"x" * (2 * CAP) + b"\n")
    return files


@pytest.mark.timeout(HANG_S + 60)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_non_files_and_oversized_files_get_one_error_line(tmp_path: Path, command: str) -> None:
    argv, suffix = COMMANDS[command]
    (tmp_path / "reply.txt").write_text("")
    (tmp_path / "c.txt").write_text("there is a bed\n")
    files = _attack_files(tmp_path, suffix)
    plan = [(kind, [a.format(f=files[kind], tmp=tmp_path) for a in argv], LIMIT_ENV if kind == "oversized" else {})
            for kind in KINDS]  # the oversized case last: its small caps stay set
    # Each command's child holds all four attacks; a hang on one shows as the timeout.
    try:
        done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(plan)], capture_output=True, text=True,
                              timeout=HANG_S, cwd=tmp_path)
    except subprocess.TimeoutExpired as exc:
        shown = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout
        pytest.fail(f"{command} hung; finished before the hang: {shown}")
    results = {r["kind"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert set(results) == set(KINDS), (done.stdout, done.stderr[-3000:])
    for kind, r in results.items():
        lines = r["stderr"].splitlines()
        where = f"{command} on {kind}: {r}"
        assert r["rc"] == 2, where
        assert len(lines) == 1 and lines[0].startswith("error: "), where
        assert "Traceback" not in r["stderr"], where
        assert files[kind].name in lines[0] or kind == "folder", where
        assert r["s"] - r["waited"] < BUDGET_S, where
