"""The suite registry is read once: in the forkserver for every child forked from it, and in a process once per set
of folders holding distribution metadata (`buildbench.harness.registry._metadata_path`)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from buildbench.harness import registry

#: Run in a Python process of its own, whose forkserver starts there (in this process one may have been started by
#: an earlier test under another environment, a plugin folder on PYTHONPATH: its children read their own registry):
#: a forked child's registry misses before and after a lookup, and the suite it found.
_CHILD = """
from buildbench.harness.isolated import IsolationLimits, call_isolated
lookup = ("(lambda r: (r._registered.cache_info().misses, r.suite_target('example'), r._registered.cache_info().misses))"
          "(__import__('buildbench.harness.registry', fromlist=['_registered']))")
if __name__ == "__main__":
    done = call_isolated(eval, (lookup,), IsolationLimits(wall_s=120.0, cpu_s=60, memory_mb=None), script_free=True)
    print(repr((done.status, done.value)))
"""


def test_a_forked_child_finds_the_registry_read(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # A script in a folder of its own: its sys.path starts with that folder, the server's with '' (the cwd).
    script = tmp_path / "scripts" / "score.py"
    script.parent.mkdir()
    script.write_text(_CHILD)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env,
                         cwd=tmp_path, check=False)
    assert out.returncode == 0, out.stderr
    status, value = ast.literal_eval(out.stdout.strip().splitlines()[-1])
    assert status == "ok", value
    before, target, after = value
    assert target == registry.suite_target("example")
    assert after == before  # no new read: 28 ms per child when each read it


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
