"""`uv pip install` with this machine's pip settings: the setup scripts' fast path (tools/bootstrap.sh,
tools/python_venvs.sh).

Usage: PYTHON tools/uv_pip.py UV TARGET_PYTHON [uv pip install arguments...]

uv reads none of pip's configuration (pip.conf files, PIP_* variables), yet that is where a machine
names its local wheels and mirrors (find-links, extra-index-url) and its own constraints. This asks
pip itself (`PYTHON -m pip config list`: every file and PIP_* variable, already merged in pip's order)
and passes the settings uv has an equivalent for, then replaces itself with uv. pip takes the best
version across all its indexes, so uv is told to do the same (unsafe-best-match); otherwise a package
on PyPI would hide a local build such as the CPU torch wheel.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

# pip reads options from the [global] section, then the command's own ([install]), then PIP_* variables.
_SECTIONS = ("global", "install", ":env:")
_LINE = re.compile(r"^(?P<section>[^.]+)\.(?P<key>[a-z0-9-]+)=(?P<value>'.*'|\".*\")$")


def pip_settings() -> dict[str, str]:
    """pip's effective install options as pip would apply them."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True
    ).stdout
    return effective(listed)


def effective(listed: str) -> dict[str, str]:
    """The options of `pip config list` output that an install uses (a later section overrides an earlier)."""
    found: dict[str, dict[str, str]] = {}
    for line in listed.splitlines():
        m = _LINE.match(line.strip())
        if m and m["section"] in _SECTIONS:
            found.setdefault(m["key"], {})[m["section"]] = str(ast.literal_eval(m["value"]))
    return {key: next(by[s] for s in reversed(_SECTIONS) if s in by) for key, by in found.items()}


def uv_arguments(settings: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """uv pip install options and environment equivalent to pip's settings."""
    args = ["--index-strategy", "unsafe-best-match"]
    env: dict[str, str] = {}
    # pip's list options are whitespace-separated in files and PIP_* variables alike
    for pip_key, uv_flag in (("find-links", "--find-links"), ("extra-index-url", "--extra-index-url"),
                             ("constraint", "--constraint")):
        for item in settings.get(pip_key, "").split():
            args += [uv_flag, item]
            if pip_key == "constraint":  # pip's build environments see its constraints too
                args += ["--build-constraints", item]
    if settings.get("index-url"):
        args += ["--index-url", settings["index-url"]]
    if settings.get("no-index", "").lower() in ("1", "true", "yes", "on"):
        args.append("--no-index")
    if settings.get("cert"):
        env["SSL_CERT_FILE"] = settings["cert"]
    if settings.get("timeout") or settings.get("default-timeout"):
        env["UV_HTTP_TIMEOUT"] = str(round(float(settings.get("timeout") or settings["default-timeout"])))
    return args, env


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("error: usage: PYTHON tools/uv_pip.py UV TARGET_PYTHON [uv pip install arguments...]", file=sys.stderr)
        return 2
    uv, target, rest = argv[0], argv[1], argv[2:]
    args, env = uv_arguments(pip_settings())
    os.execve(uv, [uv, "pip", "install", "-p", target, *args, *rest], {**os.environ, **env})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
