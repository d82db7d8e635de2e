"""Agent code shapes its work folder so that the harness's walks fail: folders nested deeper than
Python's recursion limit (``os.walk`` and ``shutil.rmtree`` recurse) or paths longer than
``PATH_MAX`` (a path-based walk gets ``ENAMETOOLONG``). Measuring, handing back and removing the
folder raised out of ``Worker.call``/``close`` (the harness process); now every walk goes by folder
descriptors (`buildbench.sandbox._tree`) and the call ends as the code made it end.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from buildbench.sandbox import Limits, Worker, _tree
from buildbench.sandbox._disk import folder_bytes
from buildbench.sandbox._tree import TreeChanged, remove_tree, walk
from buildbench.sandbox.lifetime import clean_stale_workdirs

from .conftest import ISOLATION

LIMITS = Limits(wall_s=2.0, cpu_s=2, memory_mb=512, max_processes=32, output_bytes=100_000, disk_mb=32)


@pytest.fixture()
def fast_tmp(tmp_path: Path) -> Iterator[Path]:
    """A scratch folder in memory where there is one: removing 1,000 nested folders costs seconds
    on some disks (each rmdir ~2 ms here), which is the filesystem's time, not the walk's."""
    if not os.access("/dev/shm", os.W_OK):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="hostile-tree-", dir="/dev/shm"))
    yield folder
    remove_tree(folder)


def _nest(depth: int, name: str) -> str:
    """Code that nests ``depth`` folders called ``name`` below the work folder, by descriptors."""
    return (
        "import os\nfd = os.open('.', os.O_RDONLY)\n"
        f"for _ in range({depth}):\n    os.mkdir({name!r}, dir_fd=fd)\n"
        f"    nxt = os.open({name!r}, os.O_RDONLY, dir_fd=fd)\n    os.close(fd)\n    fd = nxt\n"
        "open('leaf', 'w', opener=lambda p, f: os.open(p, f, dir_fd=fd)).write('x')\n"
    )


@pytest.mark.parametrize("depth,name", [(1100, "d"), (24, "n" * 250)], ids=["deep", "long-path"])
def test_a_deep_or_long_tree_is_measured_handed_back_and_removed(depth: int, name: str, fast_tmp: Path) -> None:
    folder = fast_tmp / "work"
    folder.mkdir()
    worker = Worker(limits=LIMITS, isolation=ISOLATION, workdir=folder)
    try:
        out = worker.call(_nest(depth, name) + "result = 'built'")
        assert out.status == "ok" and out.result == "built", out
        # Over the wall limit: the process is stopped and the folder handed back mid-episode.
        out = worker.call("while True:\n    pass\n")
        assert out.status == "timeout", out
        out = worker.call("result = 6 * 7")
        assert out.status == "ok" and out.result == 42 and out.worker_restarted, out
        assert folder_bytes(str(folder)) >= depth * 4096
    finally:
        worker.close()
    assert remove_tree(folder) and not folder.exists()


def test_a_deep_tree_over_the_disk_quota_is_a_limit(fast_tmp: Path) -> None:
    limits = Limits(wall_s=10.0, cpu_s=10, memory_mb=512, disk_mb=2)
    with Worker(limits=limits, isolation=ISOLATION, workdir=fast_tmp) as worker:
        out = worker.call(_nest(1100, "d"))
        assert out.status == "limit" and "disk limit" in (out.error or ""), out


def _chain(root: Path, depth: int) -> Path:
    """``depth`` nested folders below ``root``, made by descriptors; the deepest one."""
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    (Path(f"/proc/self/fd/{fd}") / "leaf").write_text("x")
    os.close(fd)
    return root


def test_walk_reaches_any_depth_holding_few_descriptors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_tree, "HELD_FDS", 4)  # the path back up through '..' is taken at depth 5
    (tmp_path / "t").mkdir()
    _chain(tmp_path / "t", 40)
    before = len(os.listdir("/proc/self/fd"))
    names = []
    for _, name, _ in walk(str(tmp_path / "t")):
        names.append(name)
        assert len(os.listdir("/proc/self/fd")) <= before + 2 * 4 + 1  # a folder and its listing
    assert names == ["leaf"] + ["d"] * 40  # a folder after its contents
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_deep_folder_moved_during_the_walk_is_noticed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_tree, "HELD_FDS", 2)
    (tmp_path / "t").mkdir()
    _chain(tmp_path / "t", 6)
    with pytest.raises(TreeChanged):
        for _, name, _ in walk(str(tmp_path / "t")):
            if name == "leaf":
                # the folder three levels up moves away: '..' no longer leads back to it
                os.rename(tmp_path / "t/d/d/d", tmp_path / "moved")


def test_remove_tree_never_follows_links_and_opens_closed_folders(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "secret").write_text("keep")
    tree = tmp_path / "work"
    (tree / "a/b").mkdir(parents=True)
    (tree / "a/b/file").write_text("x")
    os.symlink(canary, tree / "a/link-dir")
    os.symlink(canary / "secret", tree / "a/b/link-file")
    os.mkfifo(tree / "fifo")
    (tree / "bad\nname\udcff").write_text("x")  # a newline and a byte that is not UTF-8
    os.chmod(tree / "a/b", 0)
    os.chmod(tree / "a", 0)
    assert remove_tree(tree) is True
    assert not tree.exists() and (canary / "secret").read_text() == "keep"
    os.symlink(canary, tmp_path / "root-link")
    assert remove_tree(tmp_path / "root-link") and canary.is_dir()  # the link goes, never its target
    assert remove_tree(tmp_path / "missing")


def test_stale_folder_cleanup_removes_a_deep_tree(fast_tmp: Path) -> None:
    stale = fast_tmp / "buildbench-sandbox-stale"
    stale.mkdir()
    _chain(stale, 1100)
    os.utime(stale, (1, 1))
    assert clean_stale_workdirs(fast_tmp, min_age_s=0) == [stale]
    assert not stale.exists()


def test_folder_bytes_counts_through_a_closed_folder(tmp_path: Path) -> None:
    (tmp_path / "closed").mkdir()
    (tmp_path / "closed/f").write_bytes(b"x" * 100_000)
    os.chmod(tmp_path / "closed", 0)
    assert folder_bytes(str(tmp_path)) >= 100_000


def test_bimedit_model_replaced_by_a_deep_folder_is_restored(fast_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ifcopenshell", reason="BIM-Edit needs ifcopenshell")
    from buildbench.suites.bimedit.env import MODEL_NAME

    from .conftest import ROOMY_WALL_S, BimEditTarget

    monkeypatch.setattr(tempfile, "tempdir", str(fast_tmp))  # the episode's work folder, in memory
    target = BimEditTarget(fast_tmp / "bim", ROOMY_WALL_S)  # the subject is the restore, not a limit
    try:
        # The model the harness reads back becomes a folder nested past the recursion limit.
        code = f"import os\nos.remove({MODEL_NAME!r})\nos.mkdir({MODEL_NAME!r})\nos.chdir({MODEL_NAME!r})\n"
        out = target.run(code + _nest(1100, "d") + "os.chdir('/')\n")
        assert out.status == "ok", out
        assert target.healthy()  # the last commit was put back in its place
    finally:
        target.close()
