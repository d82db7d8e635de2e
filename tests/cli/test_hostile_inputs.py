"""Hostile files through the public commands: one ``error:`` line, exit 2, quickly, bounded
memory — never a traceback, a hang or a score."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from buildbench.jsonio import JSONInputError, parse_json
from buildbench.limits import LIMITS, limit

COMMANDS = {
    "dreamhouse validate": ["dreamhouse", "validate", "{path}"],
    "buildarena simulate": ["buildarena", "simulate", "{path}", "--task", "transport-1"],
}

CONTENTS = {
    "not utf-8": (b"\xff\xfe\x00garbage", "not UTF-8 text"),
    "deep nesting": (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 200 levels"),
    "NaN": (b'{"members": [{"name": "Stud_1", "dimensions": [NaN, 1, 1]}]}', "NaN is not a finite number"),
    "overflow": (b'{"members": [{"name": "Stud_1", "dimensions": [1e999, 1, 1]}]}', "out of the range"),
    "empty": (b"", "Expecting value"),
}


def _children_cpu_s() -> float:
    """CPU seconds of the child processes this process has reaped so far (``_run`` reaps its own)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "buildbench", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("content", sorted(CONTENTS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_hostile_file_gets_one_line(tmp_path: Path, command: str, content: str) -> None:
    data, needle = CONTENTS[content]
    path = tmp_path / "input.json"
    path.write_bytes(data)
    t0 = _children_cpu_s()
    out = _run([a.format(path=path) for a in COMMANDS[command]])
    assert _children_cpu_s() - t0 < 60  # quickly: in CPU seconds, which load does not stretch (timeout: hangs)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
    assert needle in out.stderr and "Traceback" not in out.stderr


def test_limits_are_enforced_and_configurable(tmp_path: Path) -> None:
    house = tmp_path / "house.json"
    members = [{"name": f"Stud_{i}", "dimensions": [0.038, 0.089, 2.4], "location": [i, 0, 1.2]} for i in range(50)]
    house.write_text(json.dumps({"members": members}))
    out = _run(["dreamhouse", "validate", str(house)], env={"BUILDBENCH_LIMIT_HOUSE_MEMBERS": "10"})
    assert out.returncode == 2 and "50 members, over the limit of 10" in out.stderr
    assert "BUILDBENCH_LIMIT_HOUSE_MEMBERS" in out.stderr
    out = _run(["dreamhouse", "validate", str(house)], env={"BUILDBENCH_LIMIT_JSON_FILE_BYTES": "100"})
    assert out.returncode == 2 and "over the 100-byte limit" in out.stderr
    blocks = [{"id": str(i), "type": "small_wooden_block", "position_virtual": [0, 0, i],
               "rotation_virtual": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]} for i in range(20)]
    machine = tmp_path / "machine.json"
    machine.write_text(json.dumps({"format": "buildbench.buildarena.machine/1", "blocks": blocks}))
    out = _run(["buildarena", "simulate", str(machine), "--task", "transport-1"],
               env={"BUILDBENCH_LIMIT_MACHINE_BLOCKS": "5"})
    assert out.returncode == 2 and "20 blocks, over the limit of 5" in out.stderr


def test_parse_json_refuses_without_recursion(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(JSONInputError, match="nested deeper than 3 levels"):
        parse_json("[[[[1]]]]", max_depth=3)
    assert parse_json('{"a": "[[[[[[[["}', max_depth=2) == {"a": "[[[[[[[["}  # brackets in strings
    with pytest.raises(json.JSONDecodeError):  # existing handlers catch it
        parse_json(b"\x80")
    monkeypatch.setenv("BUILDBENCH_LIMIT_JSON_DEPTH", "banana")
    with pytest.raises(ValueError, match="BUILDBENCH_LIMIT_JSON_DEPTH='banana' is not an integer"):
        limit("json_depth")
    assert all(default > 0 for default, _ in LIMITS.values())
