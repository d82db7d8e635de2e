"""JSON and JSONL inputs as other tools write them, through each reader a command line reaches
(task files, run files, price files, scene files): what is still the same JSON is read as such (a
UTF-8 byte-order mark, CRLF line ends, no final newline, blank lines); what is not, or is ambiguous,
is one ``error:`` line naming the file and what is wrong, exit 2, nothing run (UTF-16/32 with or
without a byte-order mark, a trailing comma, NaN, 1e400, a key given twice)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from .json_variants import REFUSED as ENCODED
from .json_variants import SAME, call, fill

SCENE = Path(__file__).parents[1] / "scenes" / "fixtures" / "procthor_train_1_room5.json"

#: Reader -> (file name, content, argv with {F} the file and {T} the test's folder).
TASK = {"id": "t1", "suite": "example", "inputs": {"target_height_m": 1.25, "lot_half_width_m": 1.5, "max_blocks": 9},
        "target": {"target_height_m": 1.25}, "metadata": {"difficulty": "easy"}}
READERS: dict[str, tuple[str, str, list[str]]] = {
    "task file (JSONL)": ("tasks.jsonl", json.dumps(TASK) + "\n" + json.dumps({**TASK, "id": "t2"}) + "\n",
                          ["run", "example", "--tasks", "{F}", "--run-dir", "{T}/run", "--workers", "0", "-q"]),
    "task file (JSON)": ("tasks.json", json.dumps([TASK], indent=1) + "\n",
                         ["run", "example", "--tasks", "{F}", "--run-dir", "{T}/run", "--workers", "0", "-q"]),
    "run file": ("run.json", json.dumps({"suite": "example", "seed": 3, "samples": 2}, indent=1) + "\n",
                 ["run", "--config", "{F}", "--print-config"]),
    "scene file": ("scene.json", SCENE.read_text(encoding="utf-8") if SCENE.is_file() else "",
                   ["scenes", "convert", "{F}", "--from", "thor", "--to", "holodeck", "--out", "{T}/out.json"]),
}


def _first_number(text: str, literal: str) -> str:
    """``text`` with its first decimal number (a value after a colon) written as ``literal``."""
    return re.sub(r"(:\s*)-?\d+\.\d+", lambda m: m.group(1) + literal, text, count=1)


#: Variant -> (the bytes of the file, what the error line says).
REFUSED: dict[str, tuple[Callable[[str], bytes], str]] = {
    **{name: ENCODED[name] for name in ("UTF-16 with a byte-order mark", "UTF-16 big-endian with a byte-order mark",
                                        "UTF-32 with a byte-order mark", "UTF-16 without a byte-order mark",
                                        "trailing comma", "a key given twice")},
    "NaN": (lambda t: _first_number(t, "NaN").encode(), "NaN is not a finite number"),
    "1e400": (lambda t: _first_number(t, "1e400").encode(), "1e400 is out of the range of a finite number"),
}


def _argv(reader: str, path: Path, folder: Path) -> list[str]:
    return fill(READERS[reader][2], path, folder)


@pytest.mark.parametrize("variant", sorted(SAME))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_the_same_json_written_another_way_is_read_as_it(reader: str, variant: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    name, text, _ = READERS[reader]
    if not text:
        pytest.skip(f"{SCENE} is absent")
    if variant == "blank lines" and reader == "task file (JSON)":
        text = text.replace("\n", "\n\n")  # a JSON document's blank lines are whitespace anyway
    plain, odd = tmp_path / "plain" / name, tmp_path / "odd" / name
    for path, data in ((plain, text.encode()), (odd, SAME[variant](text))):
        path.parent.mkdir()
        path.write_bytes(data)
    rc_plain, _, err_plain = call(_argv(reader, plain, plain.parent), capsys)
    out_plain = (plain.parent / "out.json").read_bytes() if reader == "scene file" else b""
    rc, _, err = call(_argv(reader, odd, odd.parent), capsys)
    assert (rc, rc_plain) == (0, 0), err or err_plain
    if reader == "scene file":
        assert (odd.parent / "out.json").read_bytes() == out_plain
    if reader.startswith("task file"):
        from buildbench.harness import run_report

        assert run_report(odd.parent / "run")["episodes"] == run_report(plain.parent / "run")["episodes"] > 0


@pytest.mark.parametrize("variant", sorted(REFUSED))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_json_that_is_not_the_same_is_one_error_line_naming_file_and_cause(
        reader: str, variant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name, text, _ = READERS[reader]
    if not text:
        pytest.skip(f"{SCENE} is absent")
    if reader == "run file" and variant in ("NaN", "1e400"):
        text = text.replace('"seed": 3', '"seed": 3.5')
    make, expected = REFUSED[variant]
    path = tmp_path / name
    path.write_bytes(make(text))
    rc, _, err = call(_argv(reader, path, tmp_path), capsys)
    if reader == "run file" and variant == "trailing comma":
        assert rc == 0, err  # a run file is YAML (JSON is YAML), where `{"seed": 3,}` is a mapping
        return
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: ") and str(path) in lines[0], err
    if reader == "run file" and variant in ("NaN", "1e400"):
        assert "seed" in lines[0], err  # YAML reads both as text, which the field refuses by name
        return
    assert expected in lines[0], err
    assert not (tmp_path / "run").exists() and not (tmp_path / "out.json").exists()
