"""The shipped front-end bundle: present, offline (no remote script or style), built from web/."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from buildbench.web.server import STATIC_ROOT, bundle_ready

WEB = Path(__file__).resolve().parents[2] / "web"


def test_bundle_is_shipped_and_loads_nothing_remote() -> None:
    assert bundle_ready(STATIC_ROOT), "run `make web`"
    html = (STATIC_ROOT / "index.html").read_text()
    refs = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert refs and all(not re.match(r"^(?:[a-z]+:)?//", r) for r in refs), refs
    js = (STATIC_ROOT / "app.js").read_text()
    assert "import(" not in js.replace("import()", ""), "the bundle must not load modules at run time"
    assert not re.search(r"""(?:fetch|src\s*=)\s*\(?\s*["']https?://""", js)


def test_committed_bundle_matches_the_sources(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None or not (WEB / "node_modules" / "esbuild").is_dir():
        pytest.skip("node or web/node_modules is missing (`make web` installs them from the lockfile)")
    subprocess.run([node, "build.mjs"], cwd=WEB, env={"BB_WEB_OUT": str(tmp_path), "PATH": "/usr/bin:/bin"},
                   check=True, capture_output=True, timeout=300)
    for name in ("app.js", "index.html", "style.css"):
        assert (tmp_path / name).read_bytes() == (STATIC_ROOT / name).read_bytes(), f"{name} is stale: run `make web`"
