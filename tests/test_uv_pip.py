"""tools/uv_pip.py: the setup scripts' uv gets the index settings pip would use, in pip's precedence.

One run end to end: a stand-in for uv records the command line and environment it was started with,
pip's configuration comes from a file of the test's own (PIP_CONFIG_FILE overrides the machine's
files). The precedence of sections and PIP_* variables is checked on `pip config list` text.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "uv_pip.py"
_spec = importlib.util.spec_from_file_location("uv_pip", TOOL)
assert _spec is not None and _spec.loader is not None
uv_pip = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(uv_pip)


def _run(tmp_path: Path, config: str, **pip_env: str) -> tuple[list[str], dict[str, str]]:
    fake_uv = tmp_path / "uv"
    fake_uv.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                       "print(json.dumps([sys.argv[1:], dict(os.environ)]))\n")
    fake_uv.chmod(0o755)
    (tmp_path / "pip.conf").write_text(config)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "SSL_CERT"))}
    env.update(PIP_CONFIG_FILE=str(tmp_path / "pip.conf"), **pip_env)
    done = subprocess.run([sys.executable, str(TOOL), str(fake_uv), "/target/python", "-e", ".[dev]"],
                          capture_output=True, text=True, env=env, timeout=120, check=True)
    argv, uv_env = json.loads(done.stdout)
    return argv, uv_env


def _pairs(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == flag]


def test_pip_settings_become_uv_options(tmp_path: Path) -> None:
    config = ("[global]\nfind-links = /wheels/a /wheels/b\nextra-index-url = file:///mirror/simple\n"
              "constraint = /pins.txt\ncert = /certs.pem\ntimeout = 42\n")
    argv, env = _run(tmp_path, config)
    assert argv[:3] == ["pip", "install", "-p"] and argv[3] == "/target/python"
    assert argv[-2:] == ["-e", ".[dev]"]  # the caller's arguments come last, unchanged
    assert _pairs(argv, "--index-strategy") == ["unsafe-best-match"]  # pip's best version across indexes
    assert _pairs(argv, "--find-links") == ["/wheels/a", "/wheels/b"]
    assert _pairs(argv, "--extra-index-url") == ["file:///mirror/simple"]
    assert _pairs(argv, "--constraint") == _pairs(argv, "--build-constraints") == ["/pins.txt"]
    assert "--no-index" not in argv and "--index-url" not in argv
    assert env["SSL_CERT_FILE"] == "/certs.pem" and env["UV_HTTP_TIMEOUT"] == "42"


def test_install_section_and_variables_override_in_pip_order() -> None:
    listed = ("global.find-links='/global'\nglobal.index-url='https://global.example/simple'\n"
              "global.no-index='false'\ninstall.find-links='/install'\nglobal.timeout='7'\n")
    settings = uv_pip.effective(listed)
    assert settings["find-links"] == "/install"
    argv, env = uv_pip.uv_arguments(settings)
    assert _pairs(argv, "--find-links") == ["/install"]
    assert _pairs(argv, "--index-url") == ["https://global.example/simple"]
    assert "--no-index" not in argv and env == {"UV_HTTP_TIMEOUT": "7"}
    settings = uv_pip.effective(listed + ":env:.find-links='/from-env'\n:env:.no-index='1'\n")
    argv, _ = uv_pip.uv_arguments(settings)
    assert _pairs(argv, "--find-links") == ["/from-env"]
    assert "--no-index" in argv


def test_usage_error_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert uv_pip.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
