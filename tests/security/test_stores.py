"""Run stores as untrusted files: a finished run on read-only media is readable; a tampered,
truncated or foreign store gives one ``error:`` line naming the file (and the record) with
exit 2 from ``report``, ``export`` and ``view --static``; an empty store is never resumed as a
new run; control and bidirectional characters in task ids never reach the terminal; a task
pack whose target names no frame is refused."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness.store import Store

BIDI = "\u202e"


def _cli(*args: str, timeout: float = 120, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, sys.executable, "-m", "buildbench", *args], capture_output=True, text=True,
                          timeout=timeout)


def _one_error(out: subprocess.CompletedProcess[str], *needles: str) -> str:
    lines = out.stderr.splitlines()
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in out.stderr, out.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("stores") / "run"
    rc = main(["run", "example", "--agent", "reference", "--split", "demo", "--limit", "2", "--run-dir", str(run_dir),
               "--workers", "0", "--quiet"])
    assert rc == 0
    return run_dir


def _copy(run: Path, tmp: Path) -> Path:
    target = tmp / "copy"
    shutil.copytree(run, target)
    return target


def _commands(run: Path, tmp: Path) -> dict[str, list[str]]:
    return {"report": ["report", str(run)], "export": ["export", str(run), "--out", str(tmp / "out.jsonl")],
            "view --static": ["view", str(run), "--static", str(tmp / "site")]}


def _with_unfinished_wal(run: Path, tmp: Path) -> Path:
    """A copy of ``run`` taken while a writer held one more episode in the WAL only."""
    target = tmp / "unfinished"
    target.mkdir()
    db = sqlite3.connect(run / Store.FILENAME, isolation_level=None)
    try:
        db.execute("PRAGMA wal_autocheckpoint=0")
        db.execute("INSERT INTO episodes SELECT 'extra', sample, seed, status, metrics, usage, artifacts, duration_s, "
                   "finished_at, json_set(record, '$.task_id', 'extra') FROM episodes LIMIT 1")
        wal = run / f"{Store.FILENAME}-wal"
        assert wal.stat().st_size > 0
        for source in (run / Store.FILENAME, wal):
            shutil.copyfile(source, target / source.name)
    finally:
        db.close()
    return target


@pytest.mark.timeout(300)
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bwrap to mount the run folder read-only")
@pytest.mark.parametrize("state", ["store only", "as left by the run", "episode in the WAL"])
def test_a_run_on_read_only_media_is_readable(finished_run: Path, tmp_path: Path, state: str) -> None:
    run = _copy(finished_run, tmp_path)
    episodes = 2
    if state == "store only":  # what copying the one file onto a stick leaves: no -wal, no -shm
        for extra in run.glob(f"{Store.FILENAME}-*"):
            extra.unlink()
    elif state == "episode in the WAL":
        run, episodes = _with_unfinished_wal(run, tmp_path), 3
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    before = sorted(p.name for p in run.iterdir())
    # The run folder as a read-only mount (EROFS, also for root): no -shm file can be made there.
    ro = ("bwrap", "--dev-bind", "/", "/", "--ro-bind", str(run), str(run))
    probe = subprocess.run([*ro, "touch", str(run / "probe")], capture_output=True, text=True)
    assert probe.returncode != 0 and "Read-only" in probe.stderr, probe
    for name, argv in _commands(run, out_dir).items():
        out = _cli(*argv, prefix=ro)
        assert out.returncode == 0, (name, out.stderr[-2000:])
        assert "Traceback" not in out.stderr and "unable to open" not in out.stderr, (name, out.stderr)
    assert len((out_dir / "out.jsonl").read_text().splitlines()) == episodes
    assert sorted(p.name for p in run.iterdir()) == before


def _sql(statement: str) -> Callable[[Path], None]:
    def tamper(store: Path) -> None:
        with sqlite3.connect(store) as db:
            db.execute(statement)
        db.close()
    return tamper


def _bytes(change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def tamper(store: Path) -> None:
        store.write_bytes(change(store.read_bytes()))
    return tamper


def _replace_with(kind: str) -> Callable[[Path], None]:
    def tamper(store: Path) -> None:
        store.unlink()
        if kind == "fifo":
            os.mkfifo(store)
        else:
            store.mkdir()
    return tamper


FIRST = "(SELECT MIN(rowid) FROM episodes)"
#: case -> (tamper, what the one error line must name besides the store)
TAMPERS: dict[str, tuple[Callable[[Path], None], str]] = {
    "record not JSON": (_sql(f"UPDATE episodes SET record = '{{\"task_id\": ' WHERE rowid = {FIRST}"), "episode"),
    "record a list": (_sql(f"UPDATE episodes SET record = '[1, 2]' WHERE rowid = {FIRST}"), "episode"),
    "record an integer": (_sql(f"UPDATE episodes SET record = 42 WHERE rowid = {FIRST}"), "episode"),
    "record bytes": (_sql(f"UPDATE episodes SET record = x'ff00ff' WHERE rowid = {FIRST}"), "episode"),
    "record without task": (_sql(f"UPDATE episodes SET record = '{{\"sample\": 0}}' WHERE rowid = {FIRST}"),
                            "episode"),
    "record steps a string": (_sql(f"UPDATE episodes SET record = json_set(record, '$.steps', 'x') "
                                   f"WHERE rowid = {FIRST}"), "episode"),
    "record metrics a list": (_sql(f"UPDATE episodes SET record = json_set(record, '$.metrics', json('[1]')) "
                                   f"WHERE rowid = {FIRST}"), "episode"),
    "record unknown field": (_sql(f"UPDATE episodes SET record = json_set(record, '$.evil', 1) "
                                  f"WHERE rowid = {FIRST}"), "episode"),
    "manifest not JSON": (_sql("UPDATE manifest SET value = '{' WHERE key = 'config'"), "manifest"),
    "no episodes table": (_sql("DROP TABLE episodes"), "episodes"),
    "truncated": (_bytes(lambda data: data[: len(data) // 2]), ""),
    "pages overwritten": (_bytes(lambda data: data[:4096] + b"\x5a" * (len(data) - 4096)), ""),
    "not SQLite": (_bytes(lambda data: b"not a database at all\n" * 100), ""),
    "empty": (_bytes(lambda data: b""), "holds no run"),
    "a FIFO": (_replace_with("fifo"), "FIFO"),
    "a folder": (_replace_with("folder"), "folder"),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("case", sorted(TAMPERS))
def test_a_tampered_store_gives_one_error_naming_file_and_record(finished_run: Path, tmp_path: Path,
                                                                 case: str) -> None:
    run = _copy(finished_run, tmp_path)
    tamper, named = TAMPERS[case]
    tamper(run / Store.FILENAME)
    for name, argv in _commands(run, tmp_path).items():
        out = _cli(*argv, timeout=60)
        line = _one_error(out, str(run))
        assert named in line, (case, name, line)


@pytest.mark.timeout(300)
def test_tampered_metric_columns_are_named_by_the_viewer(finished_run: Path, tmp_path: Path) -> None:
    run = _copy(finished_run, tmp_path)
    _sql(f"UPDATE episodes SET metrics = '[oops' WHERE rowid = {FIRST}")(run / Store.FILENAME)
    _one_error(_cli("view", str(run), "--static", str(tmp_path / "site")), str(run / Store.FILENAME))
    _one_error(_cli("export", str(run), "--format", "parquet", "--out", str(tmp_path / "x.parquet")),
               str(run / Store.FILENAME), "metrics")


@pytest.mark.timeout(300)
def test_an_empty_store_is_not_resumed_as_a_new_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / Store.FILENAME).write_bytes(b"")
    out = _cli("run", "example", "--agent", "reference", "--split", "demo", "--limit", "1", "--run-dir", str(run),
               "--resume", "--workers", "0", "-q")
    _one_error(out, str(run / Store.FILENAME), "empty")
    assert (run / Store.FILENAME).stat().st_size == 0 and sorted(p.name for p in run.iterdir()) == [Store.FILENAME]


@pytest.mark.timeout(300)
def test_bidirectional_characters_in_ids_never_reach_the_terminal(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    record = {"id": f"evil{BIDI}txt.exe\x1b[2J", "inputs": {"target_height_m": 1.0, "lot_half_width_m": 2.0,
                                                             "max_blocks": 5}}
    tasks.write_text(json.dumps(record) + "\n")
    out = _cli("run", "example", "--tasks", str(tasks), "--run-dir", str(tmp_path / "run"), "--workers", "0", "-q")
    line = _one_error(out, "\\u202e", "\\u001b")
    assert BIDI not in out.stdout + out.stderr and "\x1b" not in out.stdout + out.stderr, line
    # A file name is no safer than an id: every error line goes through the same escaping.
    out = _cli("dreamhouse", "validate", str(tmp_path / f"house{BIDI}nosj.json"))
    assert out.returncode == 2 and BIDI not in out.stderr and "\\u202e" in out.stderr, out.stderr


@pytest.mark.timeout(300)
def test_a_task_pack_whose_target_names_no_frame_is_refused(tmp_path: Path) -> None:
    from buildbench.suites.dreamhouse.dhpack import PackTask, write_dhpack
    from buildbench.suites.dreamhouse.views_basis import VIEW_NAMES

    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
    pack = write_dhpack(tmp_path / "evil.dhpack", [PackTask("AF_01_0001", "A-Frame", "a house", {},
                                                            dict.fromkeys(VIEW_NAMES, png), {"members": 5})])
    out = _cli("dreamhouse", "unpack", str(pack), "--out", str(tmp_path / "out"))
    assert out.returncode == 2 and "target_json" in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert not (tmp_path / "out" / "tasks.jsonl").exists()


@pytest.mark.timeout(300)
def test_sft_export_copies_no_file_through_a_hard_link(tmp_path: Path) -> None:
    from buildbench.harness.episode import Episode, Step

    outside = tmp_path / "outside.png"
    outside.write_bytes(b"\x89PNG\r\n\x1a\nsecret outside the run")
    run = tmp_path / "run"
    with Store(run) as store:
        store.write_manifest({"config": {"suite": "example", "agent": "x", "protocol": "one-shot", "split": "demo",
                                         "seed": 0, "samples": 1}, "tasks": 1})
        store.add_episode(Episode(task_id="tower_0000_0000", sample=0, suite="example", agent="x",
                                  protocol="one-shot", seed=0, steps=[Step(index=0, image_paths=["hard.png"])]))
    (run / "artifacts").mkdir()
    os.link(outside, run / "artifacts" / "hard.png")
    out = _cli("export", str(run), "--format", "sft", "--out", str(tmp_path / "sft"))
    _one_error(out, "hard.png", "hard link")
    copied = list((tmp_path / "sft").rglob("*.png")) if (tmp_path / "sft").exists() else []
    assert all(b"secret" not in p.read_bytes() for p in copied)
