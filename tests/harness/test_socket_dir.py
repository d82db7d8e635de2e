"""A deep temp root (``TMPDIR``) does not stop the forkserver: its socket path must fit ``sun_path``."""

from __future__ import annotations

import multiprocessing.process
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from buildbench.parallel import SUN_PATH_BYTES, fit_socket_dir


@pytest.fixture()
def deep_tmp(tmp_path: Path) -> Path:
    """A temp root whose forkserver socket path (``<root>/pymp-XXXXXXXX/listener-XXXXXXXX``) is too long."""
    deep = tmp_path / ("d" * (SUN_PATH_BYTES - len(os.fsencode(tmp_path)) - 20))
    deep.mkdir()
    return deep


@pytest.fixture()
def own_config() -> Iterator[dict[str, object]]:
    """This process's multiprocessing config, its temp dir as it was once the test ends."""
    config = multiprocessing.process.current_process()._config  # type: ignore[attr-defined]
    kept = config.get("tempdir")
    yield config
    config["tempdir"] = kept


def _short(path: object) -> bool:
    return isinstance(path, str) and len(os.fsencode(path)) + 18 < SUN_PATH_BYTES and os.path.isdir(path)


def test_a_run_and_a_forkserver_pool_work_under_a_deep_temp_root(deep_tmp: Path, tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from buildbench.cli import main\n"
        "from buildbench.parallel import map_ordered\n"
        "assert list(map_ordered(abs, [-1, -2, -3], workers=2, start_method='forkserver')) == [1, 2, 3]\n"
        f"sys.exit(main(['run', 'example', '--agent', 'reference', '--split', 'demo', '--limit', '1',"
        f" '--run-dir', {str(tmp_path / 'run')!r}, '--quiet']))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TMPDIR": str(deep_tmp)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "AF_UNIX" not in out.stderr


def test_a_deep_or_vanished_temp_dir_is_replaced_by_a_short_one(own_config: dict[str, object],
                                                                deep_tmp: Path, tmp_path: Path) -> None:
    own_config["tempdir"] = str(deep_tmp)
    fit_socket_dir()
    assert _short(own_config["tempdir"]) and str(own_config["tempdir"]).startswith("/")
    own_config["tempdir"] = str(tmp_path / "gone")
    fit_socket_dir()
    assert _short(own_config["tempdir"]) and own_config["tempdir"] != str(tmp_path / "gone")


def test_a_temp_dir_that_fits_is_kept(own_config: dict[str, object], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fits = tmp_path / "pymp-short"
    fits.mkdir()
    own_config["tempdir"] = str(fits)
    fit_socket_dir()
    assert own_config["tempdir"] == str(fits)
    # Not chosen yet, under a root that fits: left for multiprocessing to make where it would.
    own_config["tempdir"] = None
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    fit_socket_dir()
    assert own_config["tempdir"] is None
