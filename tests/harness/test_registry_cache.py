"""The suite registry is read once: in the forkserver for every child forked from it, and in a process once per set
of folders holding distribution metadata (`buildbench.harness.registry._metadata_path`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from buildbench.harness import registry
from buildbench.harness.isolated import IsolationLimits, call_isolated

LIMITS = IsolationLimits(wall_s=120.0, cpu_s=60, memory_mb=None)

#: Evaluated in a forked child (``eval`` pickles by name): the registry cache's misses before and after a lookup.
_LOOKUP = ("(lambda r: (r._registered.cache_info().misses, r.suite_target('example'), r._registered.cache_info().misses))"
           "(__import__('buildbench.harness.registry', fromlist=['_registered']))")


def test_a_forked_child_finds_the_registry_read() -> None:
    # A module no other test preloads: the server starts again here, under this process's environment. One that an
    # earlier test started with PYTHONPATH on a plugin's folder read another registry (its children read their own).
    done = call_isolated(eval, (_LOOKUP,), LIMITS, preload=("quopri",), script_free=True)
    assert done.status == "ok", done
    before, target, after = done.value
    assert target == registry.suite_target("example")
    # The child's sys.path starts with this script's folder, the server's with '': no new read (28 ms per child).
    assert after == before


def test_folders_without_metadata_leave_the_key_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain, site = tmp_path / "scripts", tmp_path / "site"
    plain.mkdir()
    site.mkdir()
    (plain / "run.py").write_text("")
    base = registry._metadata_path()
    monkeypatch.setattr(sys, "path", [str(plain), *sys.path, str(site), str(tmp_path / "gone.zip")])
    # A missing entry (or a zip) is kept: only a folder listed without metadata is known not to matter.
    assert registry._metadata_path() == (*base, str(tmp_path / "gone.zip"))
    (site / "toy_suite-1.0.dist-info").mkdir()  # an install into a folder on the path changes the key
    assert registry._metadata_path() == (*base, str(site), str(tmp_path / "gone.zip"))
    (site / "toy_suite-1.0.dist-info").rmdir()
    assert registry._metadata_path() == (*base, str(tmp_path / "gone.zip"))
