"""Generation on a user model, and batch re-scoring, run in child processes recycled every few base
edits or tasks (IfcOpenShell keeps memory of each model it opens): the files and rows are identical
to doing it all in one process, and a failure in a child reaches the caller as before."""

from __future__ import annotations

import hashlib
import os
import signal
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness.errors import ConfigError
from buildbench.suites.bimedit import rescore as rescore_module
from buildbench.suites.bimedit.generate.tasks import usergen
from buildbench.suites.bimedit.generate.tasks.oracle import write_oracle_prediction
from buildbench.suites.bimedit.generate.tasks.usergen import generate_from_ifc
from buildbench.suites.bimedit.recycle import forking, in_child

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_house_ifc4x3_ft.ifc"

needs_fork = pytest.mark.skipif(not forking(), reason="no fork start method here: batches run in this process")


def digests(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` by relative path, with its SHA-256 (the report's timing line left out)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            if p.name == usergen.REPORT_FILE:
                data = b"\n".join(line for line in data.splitlines() if not line.startswith(b"made "))
            out[str(p.relative_to(folder))] = hashlib.sha256(data).hexdigest()
    return out


def _in_process(fn, *args):  # type: ignore[no-untyped-def]
    return fn(*args)


@needs_fork
def test_recycled_children_write_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    children = []

    def counted(fn, *args):  # type: ignore[no-untyped-def]
        children.append(fn)
        return in_child(fn, *args)

    monkeypatch.setattr(usergen, "GROUPS_PER_CHILD", 2)  # several children, each after what earlier ones took
    monkeypatch.setattr(usergen, "in_child", counted)
    # one output folder for both (tasks name their files by path), moved aside in between
    forked, report_forked = generate_from_ifc(FIXTURE, tmp_path / "out", n=21, seed=5)
    (tmp_path / "out").rename(tmp_path / "forked")
    monkeypatch.setattr(usergen, "in_child", _in_process)
    here, report_here = generate_from_ifc(FIXTURE, tmp_path / "out", n=21, seed=5)
    (tmp_path / "out").rename(tmp_path / "here")
    assert len(children) >= 4
    assert forked == here and len(forked) == 21
    assert report_forked.skipped == report_here.skipped and report_forked.per_cell == report_here.per_cell
    assert digests(tmp_path / "forked") == digests(tmp_path / "here")
    assert len(digests(tmp_path / "here")) > 5


@needs_fork
def test_a_childs_error_is_raised_as_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture) -> None:
    parent = os.getpid()

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        assert os.getpid() != parent  # it ran in a child
        raise ConfigError("the model cannot be written: disk full")

    monkeypatch.setattr(usergen, "make_on_model", broken)
    with pytest.raises(ConfigError, match="disk full"):
        generate_from_ifc(FIXTURE, tmp_path / "a", n=6, seed=0)
    rc = main(["bimedit", "generate", "--ifc", str(FIXTURE), "--n", "6", "--out", str(tmp_path / "b")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert [line for line in err if line.startswith("error:")] == ["error: the model cannot be written: disk full"]


@needs_fork
def test_a_child_that_dies_is_an_error_not_a_hang() -> None:
    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    with pytest.raises(RuntimeError, match=r"died without an answer \(exit status -9\)"):
        in_child(die)


@needs_fork
def test_a_result_that_does_not_pickle_is_reported() -> None:
    with pytest.raises(RuntimeError, match="sending a child's answer back"):
        in_child(lambda: (lambda: None))
    assert in_child(sum, [1, 2, 3]) == 6


@needs_fork
def test_rescoring_in_recycled_children_gives_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture) -> None:
    tasks, _ = generate_from_ifc(FIXTURE, tmp_path, n=12, seed=0)
    preds = tmp_path / "preds"
    preds.mkdir()
    (preds / f"{tasks[0].task_id}.ifc").write_text("ISO-10303-21;\nnot ifc\n")
    for t in tasks[1:9]:
        write_oracle_prediction(t, preds / f"{t.task_id}.ifc")
    Path(tasks[8].ground_truth_ifc).unlink()  # its group's other tasks (6, 7) lose theirs too

    monkeypatch.setattr(rescore_module, "TASKS_PER_CHILD", 3)
    forked = rescore_module.rescore(tasks, preds)
    pooled = rescore_module.rescore(tasks, preds, workers=2)
    monkeypatch.setattr(rescore_module, "in_child", _in_process)
    here = rescore_module.rescore(tasks, preds)
    assert forked == here == pooled
    assert [r.status for r in here] == ["error"] + ["scored"] * 5 + ["error"] * 3 + ["missing"] * 3

    monkeypatch.setattr(rescore_module, "in_child", in_child)
    rc = main(["bimedit", "score", "--tasks", str(tmp_path / "tasks.jsonl"), "--preds", str(preds)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 7 and all(line.startswith("error: task ") for line in err)
