"""The work folder's entry cap: measuring it is bounded, and a crowded folder is the agent's ``limit``.

An agent can leave 10^5 empty files (far under a byte cap of GiBs); every later measurement
walked all of them, so each call took longer than its wall limit. The walks now stop at the
entry cap, counted here by the entries they visit (no timing asserts).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from buildbench.sandbox import Limits, Worker, _disk
from buildbench.sandbox._disk import REFUSE_FACTOR, crowded, folder_usage

from .conftest import ISOLATION

CAP = 10
LIMITS = Limits(wall_s=20.0, cpu_s=20, memory_mb=1024, max_processes=32, disk_entries=CAP)


def _fill(folder: Path, count: int) -> None:
    for i in range(count):
        (folder / f"e{i}").touch()


@pytest.fixture()
def visited(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Entries every walk of the quota visits, one count per walk."""
    counts: list[int] = []
    real = _disk.walk

    def counting(root: str, **options: Any) -> Iterator[tuple[int, str, os.stat_result]]:
        counts.append(0)
        for item in real(root, **options):
            counts[-1] += 1
            yield item

    monkeypatch.setattr(_disk, "walk", counting)
    return counts


def test_a_walk_stops_at_the_entry_bound(tmp_path: Path, visited: list[int]) -> None:
    _fill(tmp_path, 500)
    usage = folder_usage(str(tmp_path), stop_entries=20)
    assert (usage.entries, usage.complete) == (21, False)
    assert visited[-1] == 21
    whole = folder_usage(str(tmp_path))
    assert (whole.entries, whole.complete) == (500, True) and whole.bytes >= 500 * _disk.MIN_ENTRY_BYTES


def test_crowded_only_past_the_refusal_bound(tmp_path: Path) -> None:
    _fill(tmp_path, REFUSE_FACTOR * CAP)
    assert crowded(str(tmp_path), CAP) is None
    (tmp_path / "one-more").mkdir()
    message = crowded(str(tmp_path), CAP)
    assert message is not None and f"over the disk limit of {CAP} entries" in message


def test_a_crowded_folder_is_a_limit_at_once_and_the_code_does_not_run(tmp_path: Path,
                                                                         visited: list[int]) -> None:
    _fill(tmp_path, 5000)
    with Worker(limits=LIMITS, isolation=ISOLATION, workdir=tmp_path) as worker:
        for _ in range(3):
            out = worker.call("open('ran', 'w').close()")
            assert out.status == "limit", out
            assert "the call was not run" in (out.error or "") and f"limit of {CAP} entries" in (out.error or "")
    assert not (tmp_path / "ran").exists()
    # one walk per call, each stopped just past the refusal bound: not 5000 entries, not a sandbox started
    assert visited == [REFUSE_FACTOR * CAP + 1] * 3


def test_going_over_the_entry_cap_is_a_limit_and_the_agent_can_clean_up(tmp_path: Path,
                                                                         visited: list[int]) -> None:
    with Worker(limits=LIMITS, isolation=ISOLATION, workdir=tmp_path) as worker:
        out = worker.call("for i in range(25):\n    open(f'f{i}', 'w').close()\n")
        assert out.status == "limit", out
        assert f"over the disk limit of {CAP} entries" in (out.error or "") and "was not run" not in (out.error or "")
        # over the cap but under the refusal bound: a call runs, and may shrink the folder, not grow it
        assert all(count <= REFUSE_FACTOR * CAP + 1 for count in visited)
        out = worker.call("open('g', 'w').close()")
        assert out.status == "limit", out
        out = worker.call("import os\nfor n in os.listdir('.'):\n    os.remove(n)\nresult = len(os.listdir('.'))")
        assert out.status == "ok" and out.result == 0, out
        assert worker.call("result = 1").result == 1
    assert all(count <= REFUSE_FACTOR * CAP + 1 for count in visited)


def test_entry_cap_must_be_positive() -> None:
    with pytest.raises(ValueError, match="disk_entries"):
        Limits(disk_entries=0)
