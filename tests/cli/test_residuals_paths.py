"""``buildbench mcp --run-dir ''`` is refused like the core commands' empty paths (it meant the
current folder), and the shared path type brings no import cycle: the MCP command's module can be
imported before the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from buildbench.cli import main


def test_mcp_refuses_an_empty_run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["mcp", "example", "--run-dir", ""]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "an empty path; give a file or folder name" in err[0]
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("first", ["buildbench.integrations.mcp_cli", "buildbench.cliargs", "buildbench.cli"])
def test_any_import_order_loads(first: str) -> None:
    code = f"import {first}; import buildbench.cli; print(buildbench.cli.cli.commands['mcp'].name)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "mcp", done.stderr[-2000:]
