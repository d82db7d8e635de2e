"""STEP text as other writers lay it out: comments, several statements on a line, a string holding
``;`` or ``/*``, CRLF line ends. The diff names changed statements by their ``#id=``; a statement it
could not name changed nothing (before the fix, a comment line above the moved point made the
moved wall an unchanged model, and the agent who moved it scored nothing)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from buildbench.suites.bimedit.check.diff import node_changes
from buildbench.suites.bimedit.check.edit import score_edit
from buildbench.suites.bimedit.check.model import load_model

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_house_ifc4x3_ft.ifc"
WALL_1 = "1W20ImXcWl0KGutJD63H9t"
#: the point only Wall 1's placement uses (#52 -> #55 -> #56 -> Wall 1)
POINT = "#52=IFCCARTESIANPOINT((0.,0.,0.));"
MOVED = "#52=IFCCARTESIANPOINT((2.,0.,0.));"


def _comment_above_each(text: str) -> str:
    return re.sub(r"^(#\d+)=", r"/* it's \1, written by hand */\n\1=", text, flags=re.MULTILINE)


def _shares_a_line(text: str) -> str:
    # #2 leads to the project's units only, so a change found as "#2 changed" reaches no element
    text = text.replace(POINT + "\n", "")
    return text.replace("#2=IFCDIMENSIONALEXPONENTS(1,0,0,0,0,0,0);", "#2=IFCDIMENSIONALEXPONENTS(1,0,0,0,0,0,0);"
                        + POINT + " /* trailing */")


def _string_with_separators(text: str) -> str:
    return text.replace("'Wall 1'", "'Wall 1; it''s /* not a comment'").replace(POINT, POINT.replace(";", " ;"))


def _crlf(text: str) -> str:
    return _comment_above_each(text).replace("\n", "\r\n")


LAYOUTS: dict[str, Callable[[str], str]] = {
    "comment above each": _comment_above_each, "shares a line": _shares_a_line,
    "string with separators": _string_with_separators, "crlf": _crlf,
}


def _move(text: str) -> str:
    moved = re.sub(r"#52=IFCCARTESIANPOINT\(\(0\.,0\.,0\.\)\)", MOVED[:-1], text)
    assert moved != text
    return moved


@pytest.fixture(scope="module")
def moved_with_wall_1(tmp_path_factory: pytest.TempPathFactory) -> frozenset[str]:
    """What moving Wall 1 modifies in the fixture as IfcOpenShell wrote it (the wall and what is
    placed relative to it)."""
    moved = tmp_path_factory.mktemp("plain") / "moved.ifc"
    moved.write_text(_move(FIXTURE.read_text("latin-1")), "latin-1")
    found = node_changes(load_model(FIXTURE), load_model(moved)).modified
    assert WALL_1 in found
    return found


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_moved_wall_is_found_whatever_the_layout(layout: str, moved_with_wall_1: frozenset[str],
                                                 tmp_path: Path) -> None:
    text = LAYOUTS[layout](FIXTURE.read_text("latin-1"))
    moved = _move(text)
    m0, truth, pred, same = (tmp_path / n for n in ("m0.ifc", "truth.ifc", "pred.ifc", "same.ifc"))
    m0.write_text(text, "latin-1", newline="")
    truth.write_text(moved, "latin-1", newline="")
    pred.write_text(moved, "latin-1", newline="")
    same.write_text(text, "latin-1", newline="")
    assert node_changes(load_model(m0), load_model(truth)).modified == moved_with_wall_1
    assert node_changes(load_model(m0), load_model(same)).empty
    task = {"task_id": "WAL-UPD-DIR-R-001", "operation": "update", "target_guids": [WALL_1]}
    solved = score_edit(m0, truth, pred, task)
    assert solved.solved and solved.final == pytest.approx(1.0)
    assert not score_edit(m0, truth, same, task).solved


def test_statements_are_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "m.ifc"
    path.write_text(_string_with_separators(_shares_a_line(FIXTURE.read_text("latin-1"))), "latin-1")
    statements = load_model(path).statements
    assert all(re.match(r"#\d+=", s) for s in statements)
    assert any("'Wall 1; it''s /* not a comment'" in s for s in statements)
    assert MOVED.replace("2.", "0.")[:-1] in statements


@pytest.mark.parametrize(("before", "after"), [
    ("#42=IFCDIRECTION((0.,0.,1.))", "#42=IFCDIRECTION((-0.,0.,1.))"),  # Wall 1's extrusion direction
    ("#42=IFCDIRECTION((0.,0.,1.))", "#42=IFCDIRECTION((6.123233995736766E-17,0.,1.))"),  # cos 90°
    ("#42=IFCDIRECTION((0.,0.,1.))", "#42=IFCDIRECTION((0.,-1.E-12,1.))"),
])
def test_zero_written_another_way_changes_nothing(before: str, after: str, tmp_path: Path) -> None:
    """Other writers (and agents' numpy) write -0. or a rotation's float noise where IfcOpenShell
    wrote 0.; seven significant digits kept them apart, and the wall was "modified"."""
    text = FIXTURE.read_text("latin-1")
    assert before in text
    other = tmp_path / "other.ifc"
    other.write_text(text.replace(before, after), "latin-1")
    assert node_changes(load_model(FIXTURE), load_model(other)).empty


def test_small_but_real_value_still_counts(tmp_path: Path) -> None:
    text = FIXTURE.read_text("latin-1")
    other = tmp_path / "other.ifc"
    other.write_text(text.replace("#42=IFCDIRECTION((0.,0.,1.))", "#42=IFCDIRECTION((1.E-06,0.,1.))"), "latin-1")
    assert node_changes(load_model(FIXTURE), load_model(other)).modified == {WALL_1}


@pytest.mark.parametrize(("layout", "line", "says"), [
    # ISO 10303-21 comments do not nest: the first */ ends this one, and "c */ #1=..." is no statement
    (lambda t: t.replace("DATA;\n", "DATA;\n/* a /* b */ c */\n", 1), 8, "'*/' outside a comment"),
    (lambda t: t.replace("\n#5=", "\n/* x /* y */ z */ #5=", 1), 12, "'*/' outside a comment"),
    (lambda t: t.replace("\n#5=", "\n*/ #5=", 1), 12, "'*/' outside a comment"),
    (lambda t: t.replace("\n#200=", "\n/* never closed\n#200=", 1), 167, "a comment '/*' that no '*/' ends"),
])
def test_a_comment_ifcopenshell_would_swallow_a_statement_at_is_refused_naming_its_line(
        layout: Callable[[str], str], line: int, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """IfcOpenShell ends a comment at its first */ (as the standard says) and then silently drops the
    statement the rest runs into (#1, the project; #5, the foot unit), or everything after a comment
    never closed: such a model is refused, not read without what its author wrote."""
    from buildbench.cli import main
    from buildbench.suites.bimedit.check.errors import ModelError

    path = tmp_path / "m.ifc"
    path.write_text(layout(FIXTURE.read_text("latin-1")), "latin-1")
    with pytest.raises(ModelError, match=re.escape(f"{path}: line {line}: {says}")):
        load_model(path)
    assert main(["bimedit", "diff", str(path), str(FIXTURE)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and f"line {line}: {says}" in err, err


def test_comment_marks_inside_strings_and_comments_are_text(tmp_path: Path) -> None:
    path = tmp_path / "m.ifc"
    text = FIXTURE.read_text("latin-1").replace("'Wall 1'", "'Wall 1 */ /*'").replace(
        "DATA;\n", "DATA;\n/* one /* comment, '*/\n/****/\n", 1)
    path.write_text(text, "latin-1")
    statements = load_model(path).statements
    assert any("'Wall 1 */ /*'" in s for s in statements) and all(re.match(r"#\d+=", s) for s in statements)
