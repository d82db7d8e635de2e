#!/usr/bin/env bash
# Idempotent virtualenvs .venv-<X.Y> for the other Pythons the project supports (make test-pythons).
# Usage: tools/python_venvs.sh 3.12 3.13
#
# Each gets the package with the dev extra at the pins of constraints.txt, installed by the main
# venv's uv (the dev extra has it) or else pip; pip's index settings apply to both (tools/uv_pip.py),
# so a local mirror makes it work offline. Re-running does nothing while
# pyproject.toml, constraints.txt and the interpreter are unchanged. A version with no
# interpreter (python<X.Y> on PATH, else pyenv's) is reported and skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

find_python() {
  local v=$1 found
  for found in "$(command -v "python$v" 2>/dev/null)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python \
               /root/.pyenv/versions/"$v".*/bin/python; do
    # a pyenv shim answers for versions pyenv has not activated: ask it to run
    if [ -n "$found" ] && [ -x "$found" ] && "$found" -c 'import sys' >/dev/null 2>&1; then
      echo "$found"
      return 0
    fi
  done
  return 1
}

for v in "$@"; do
  venv=".venv-$v"
  if ! python=$(find_python "$v"); then
    echo "python_venvs: no Python $v found (python$v on PATH or pyenv); skipped" >&2
    continue
  fi
  want="$("$python" -c 'import sys; print(sys.version)' | cat - pyproject.toml constraints.txt setup.py src/buildbench/suites/buildarena/physics/_tick.c src/buildbench/suites/buildarena/physics/_welds.c src/buildbench/suites/buildarena/physics/_welds.h | sha256sum | cut -c1-16)"
  stamp="$venv/.buildbench-stamp"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/buildbench" ]; then
    continue
  fi
  # uv resolves and downloads in parallel: a fresh venv in about a minute where pip takes ten. It gets
  # pip's index settings from tools/uv_pip.py (uv reads no pip configuration); should it fail, pip does it.
  # The build constraint pins the mujoco whose headers the C tick loop is compiled against.
  if [ -x .venv/bin/uv ] && { [ -x "$venv/bin/python" ] || .venv/bin/uv venv -q -p "$python" "$venv"; } &&
     .venv/bin/python tools/uv_pip.py .venv/bin/uv "$venv/bin/python" -q \
       -c constraints.txt --build-constraints constraints.txt -e ".[dev]"; then
    :
  else
    [ ! -x .venv/bin/uv ] || echo "python_venvs: uv failed (above); pip installs $venv" >&2
    [ -x "$venv/bin/python" ] && "$venv/bin/python" -m pip --version >/dev/null 2>&1 || { rm -rf "$venv"; "$python" -m venv "$venv"; }
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -U pip
    PIP_CONSTRAINT="$PWD/constraints.txt" "$venv/bin/python" -m pip install -q --disable-pip-version-check -c constraints.txt -e ".[dev]"
  fi
  echo "$want" > "$stamp"
  echo "python_venvs: $venv ready ($("$venv/bin/python" -V))"
done
