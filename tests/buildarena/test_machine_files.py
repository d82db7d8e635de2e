"""Machine files as other tools and hand edits write them, through `buildbench buildarena export-bsg`.

A machine file is a history list (the original's ``<machine>.json``, or its ``_full.json`` with
queries and ``failed`` marks, or 2.0's object holding it under ``operation_history``), a machine
document (``Machine.to_json``) or an episode outcome. What keeps the meaning gives the machine of
the plain file; what does not is one ``error:`` line naming the file, the block or call and the
field, exit status 2: never a traceback, never a machine built with parts silently left out.
"""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.suites.buildarena.export import history_json, load_history
from buildbench.suites.buildarena.library.workbench import Workbench
from buildbench.suites.buildarena.machine_files import load_machine
from buildbench.suites.buildarena.model import Block

Doc = dict[str, Any]

#: A wheeled frame with a brace, a winch, a water cannon turned by 180° and a control sequence.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("start", {"init_shift": [0, 0, 0], "init_rotation": [0, 0, 0]}),
    ("attach_block_to", {"base_block": 1, "face": "E", "new_block": "Small Wooden Block"}),
    ("attach_block_to", {"base_block": 1, "face": "F", "new_block": "Small Wooden Block"}),
    ("attach_block_to", {"base_block": 2, "face": "C", "new_block": "Small Wooden Block", "note": "top"}),
    ("attach_block_to", {"base_block": 2, "face": "A", "new_block": "Powered Wheel"}),
    ("attach_block_to", {"base_block": 3, "face": "B", "new_block": "Powered Wheel"}),
    ("connect_blocks", {"block_a": 2, "face_a": "B", "block_b": 3, "face_b": "A", "connector": "Brace"}),
    ("connect_blocks", {"block_a": 3, "face_a": "D", "block_b": 4, "face_b": "E", "connector": "Winch"}),
    ("attach_block_to", {"base_block": 4, "face": "B", "new_block": "Water Cannon"}),
    ("twist_block", {"block_id": 9, "angle": 180}),
    ("change_control_key", {"block_id": 5, "action": "spinning_forward", "new_key": "Alpha2"}),
    ("add_control_sequence", {"time": 0, "key": "Alpha2", "hold_for": 5}),
]


@pytest.fixture(scope="module")
def history() -> list[Doc]:
    bench = Workbench()
    for op, params in CALLS:
        assert bench.call(op, params).ok, op
    return json.loads(history_json(bench.machine))


@pytest.fixture(scope="module")
def document(history: list[Doc]) -> Doc:
    return load_history(json.dumps(history)).to_json()


def _bsg(path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["buildarena", "export-bsg", str(path), *args])
    out, err = capsys.readouterr()
    return rc, out, err


def _poses(path: Path) -> list[tuple[str, str, list[float], list[str | None]]]:
    """Id, type, pose (position, then rotation row by row, to 9 decimals: a rounded rotation is
    snapped to the nearest rotation, equal to the exact one to ~1e-16) and the blocks each block
    is joined to (its base, a connector's two ends)."""
    machine = load_machine(path)

    def joined(b: Block) -> list[str | None]:
        refs = [*(b.ends or ()), *([b.attached_to] if b.attached_to else [])]
        return [getattr(machine.joined_block(b, r), "id", None) for r in refs]

    return [(b.id, b.type, [round(float(v), 9) + 0.0 for v in [*b.position, *b.rotation.ravel()]], joined(b))
            for b in machine.blocks.values()]


def _block(k: int, edit: Callable[[Doc], None]) -> Callable[[Doc], None]:
    return lambda d: edit(d["blocks"][k])


def _connector(edit: Callable[[Doc], None]) -> Callable[[Doc], None]:
    return lambda d: edit(next(b for b in d["blocks"] if b["ends"] is not None))


def _rounded(d: Doc) -> None:
    for b in d["blocks"]:
        b["rotation_virtual"] = [[round(v, 6) for v in row] for row in b["rotation_virtual"]]


#: document edit -> what its one error line says
BAD_DOCUMENTS: dict[str, tuple[Callable[[Doc], None], str]] = {
    "duplicate id": (_block(3, lambda b: b.update(id="3")), "block 3: id '3' is already block 2's"),
    "link to a missing block": (_block(1, lambda b: b["links"].update(D={"block": "99", "face": "A"})),
                                "block 1 ('2'): field 'links.D' names block '99', which the machine does not hold"),
    "base face the base lacks": (_block(2, lambda b: b.update(attached_to={"block": "1", "face": "Q"})),
                                 "field 'attached_to': a Starting Block has no face 'Q'"),
    "scaled rotation": (_block(2, lambda b: b.update(rotation_virtual=[[2 * v for v in r] for r in b["rotation_virtual"]])),
                        "field 'rotation_virtual' is not a rotation"),
    "mirrored rotation": (_block(1, lambda b: b["rotation_virtual"].__setitem__(0, [-1.0, 0.0, 0.0])),
                          "is not a rotation: mirrored"),
    "quaternion for a matrix": (_block(1, lambda b: b.update(rotation_virtual=[1, 0, 0, 0])),
                                "must be a 3x3 rotation matrix"),
    "position as strings": (_block(1, lambda b: b.update(position_virtual=["0", "1", "0"])),
                            "field 'position_virtual' must be 3 finite numbers"),
    "position beyond the library's range": (_block(1, lambda b: b.update(position_virtual=[1e300, 0, 0])),
                                            "reaches 1e+300 units"),
    "unknown block type": (_block(1, lambda b: b.update(type="small wooden block")), "not a block type"),
    "connector with one end": (_connector(lambda b: b.update(ends=b["ends"][:1])), "needs field 'ends'"),
    "flipped as a string": (_block(4, lambda b: b.update(flipped="false")), "field 'flipped' must be true or false"),
    "keys as a list": (_block(4, lambda b: b.update(keys=["Alpha2"])), "field 'keys' must map each action"),
    "links as a list": (_block(1, lambda b: b.update(links=[])), "field 'links' must be an object"),
    "not an object": (lambda d: d["blocks"].__setitem__(2, "Small Wooden Block"), "block 2: expected an object"),
    "negative press time": (lambda d: d["control_sequence"][0].update(time=-1),
                            "control_sequence entry 0: field 'time' must be a finite number"),
    "next id in use": (lambda d: d.update(next_id=2), "field 'next_id' is 2, but block"),
}


@pytest.mark.parametrize("variant", sorted(BAD_DOCUMENTS))
def test_malformed_document_is_one_error_line(document: Doc, variant: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    edit, says = BAD_DOCUMENTS[variant]
    doc = copy.deepcopy(document)
    edit(doc)
    path = tmp_path / "machine.json"
    path.write_text(json.dumps(doc))
    rc, out, err = _bsg(path, capsys)
    assert rc == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {path}: ") and says in err, err


@pytest.mark.parametrize("variant", ["rotations rounded to 6 decimals", "integer ids", "extra keys"])
def test_document_variant_gives_the_machine_of_the_plain_file(document: Doc, variant: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    doc = copy.deepcopy(document)
    if variant == "rotations rounded to 6 decimals":
        _rounded(doc)
    elif variant == "integer ids":  # in references too: a connector's ends were then joined to nothing
        for b in doc["blocks"]:
            b["id"] = int(b["id"])
            for ref in [b["attached_to"], *b["links"].values(), *(b["ends"] or [])]:
                if ref is not None:
                    ref["block"] = int(ref["block"])
    else:
        doc["exporter"] = {"name": "other", "version": [1, 2]}
        for b in doc["blocks"]:
            b["guid"] = "0f0e"
            for ref in b["ends"] or []:
                ref["weld"] = {"strength": 1}
    plain, other = tmp_path / "plain.json", tmp_path / "other.json"
    plain.write_text(json.dumps(document))
    other.write_text(json.dumps(doc))
    rc, _, err = _bsg(other, capsys)
    assert rc == 0, err
    assert _poses(other) == _poses(plain)


def test_a_history_call_that_fails_on_replay_is_an_error_not_a_machine_without_it(
        history: list[Doc], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = copy.deepcopy(history)
    calls[2]["params"]["base_block"] = 42  # every later call on block 3 would fail too
    path = tmp_path / "history.json"
    path.write_text(json.dumps(calls))
    rc, out, err = _bsg(path, capsys)
    assert rc == 2 and out == ""
    assert err == f"error: {path}: history call 2 (attach_block_to) fails on replay: Base block 42 not found, please try again.\n"


def test_a_call_only_the_original_accepted_points_to_the_released_profile(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = [{"op": "start", "params": {}},
             {"op": "attach_block_to", "params": {"base_block": 1, "face": "E", "new_block": "Ballast"}}]
    path = tmp_path / "history.json"
    path.write_text(json.dumps(calls))
    rc, _, err = _bsg(path, capsys)
    assert rc == 2 and "history call 1 (attach_block_to) fails on replay" in err and "--profile released" in err
    assert _bsg(path, capsys, "--profile", "released")[0] == 0


def test_full_wrapped_and_gzip_histories_give_the_machine_of_the_plain_history(
        history: list[Doc], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    full = [history[0], {"op": "get_machine_summary", "params": {}, "result": "..."},
            {"op": "failed", "params": {"func_name": "attach_block_to", "message": "Base block 7 not found"}},
            {"op": "attach_block_to", "params": {"base_block": 7, "face": "A", "new_block": "Torch"},
             "result": "Base block 7 not found, please try again."},
            *history[1:], {"op": "review_control_sequence", "params": {}, "result": "..."}]
    files = {"plain": history, "full": full, "wrapped": {"operation_history": history}, "gzip": history}
    outs = {}
    for name, content in files.items():
        path = tmp_path / f"{name}.json"
        text = json.dumps(content).encode()
        path.write_bytes(gzip.compress(text) if name == "gzip" else text)
        rc, outs[name], err = _bsg(path, capsys, "--name", "m")
        assert rc == 0, err
    assert outs["full"] == outs["plain"] == outs["wrapped"] == outs["gzip"]


def test_a_600_block_machine_loads_in_both_forms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = [{"op": "start", "params": {}}] + [
        {"op": "attach_block_to", "params": {"base_block": k, "face": "E", "new_block": "Small Wooden Block"}}
        for k in range(1, 600)]
    hist, doc = tmp_path / "hist.json", tmp_path / "doc.json"
    hist.write_text(json.dumps(calls))
    doc.write_text(json.dumps(load_history(json.dumps(calls)).to_json()))
    rc_h, out_h, _ = _bsg(hist, capsys, "--name", "m")
    rc_d, out_d, _ = _bsg(doc, capsys, "--name", "m")
    assert rc_h == rc_d == 0 and out_h == out_d and out_h.count("<Block ") == 600


def test_a_full_history_names_a_failing_call_by_its_place_in_the_file(
        history: list[Doc], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    full = [history[0], {"op": "get_machine_summary", "params": {}, "result": "..."},
            {"op": "attach_block_to", "params": {"base_block": 42, "face": "A", "new_block": "Torch"}, "result": ""}]
    path = tmp_path / "full.json"
    path.write_text(json.dumps(full))
    rc, _, err = _bsg(path, capsys)
    assert rc == 2 and "history call 2 (attach_block_to) fails on replay: Base block 42 not found" in err


@pytest.mark.parametrize(("edit", "says"), [
    ({"machine": [{"params": {}}]}, "outcome field 'machine' must be a JSON list of {'op', 'params', 'result'} "
                                    "objects with a non-empty string 'op': call 0 has 'op' None"),
    ({"machines": {"m1": "start"}}, "outcome field 'machines' entry 'm1' must be a JSON list"),
    ({"profile": "weird"}, "outcome field 'profile' is 'weird', not one of default, released"),
    ({"rules": {"max_shift": "x"}}, "outcome field 'rules' holds a value of the wrong kind"),
    ({"rules": {"max_shfit": 1}}, "outcome field 'rules' must be an object of allow_disabled_blocks, drop_links, max_blocks"),
])
def test_a_malformed_outcome_is_one_error_line(history: list[Doc], edit: Doc, says: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    outcome = {"format": "buildbench.buildarena.outcome/1", "task_id": "transport-1", "approved": True,
               "final": "m1", "machine": history, "machines": {"m1": history}}
    path = tmp_path / "outcome.json"
    path.write_text(json.dumps(outcome))
    assert _bsg(path, capsys)[0] == 0
    path.write_text(json.dumps({**outcome, **edit}))
    rc, out, err = _bsg(path, capsys)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1 and err.startswith(f"error: {path}: ")
    assert says in err, err
