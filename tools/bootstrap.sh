#!/usr/bin/env bash
# Idempotent setup for a fresh Debian machine: system packages, then the project virtualenv.
# Re-running does nothing when everything is already in place.
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium + chromium-driver: the web viewer's browser tests (tests/web) drive headless Chromium.
APT_PACKAGES=(libegl1 libegl-mesa0 libgl1-mesa-dri bubblewrap chromium chromium-driver)
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3

source tools/apt.sh
ensure_apt_packages bootstrap "${APT_PACKAGES[@]}"

# Real Blender (its own venv) for the DreamHouse `blender` executor and conformance tests;
# BUILDBENCH_SKIP_BLENDER=1 skips it and those tests say so.
bash tools/setup_blender.sh

ALL=".[dev,train,ray,gym,inspect,verifiers]"
# The pins reach the isolated build environment too (uv: build constraints, pip: PIP_CONSTRAINT): the C
# tick loop is compiled against the headers of the pinned mujoco, the one it runs with (another
# version's headers make it fall back to Python). No --compile-bytecode: compiling all of site-packages
# up front took ~4 of uv's ~5 minutes here; Python compiles the few modules a run imports on first use.
uv_install() {
  .venv/bin/python tools/uv_pip.py .venv/bin/uv .venv/bin/python -q --upgrade-package pip \
    -c constraints.txt --build-constraints constraints.txt pip -e "$1"
}
pip_install() {
  PIP_CONSTRAINT="$PWD/constraints.txt" .venv/bin/python -m pip install -q --disable-pip-version-check -c constraints.txt "$@"
}

install_venv() {
  # A venv whose creation was cut short (Ctrl-C, a killed job) has its python but no pip: made again.
  [ -x .venv/bin/python ] && .venv/bin/python -m pip --version >/dev/null 2>&1 || "$PYTHON" -m venv --clear .venv
  # uv (pinned; the dev extra keeps it) resolves, downloads and installs in parallel: a few times faster
  # than pip. It gets pip's index settings from tools/uv_pip.py; wherever uv fails, pip does the same.
  [ -x .venv/bin/uv ] || pip_install uv || echo "bootstrap: uv could not be installed; pip installs the venv" >&2
  # The optional extras (training: torch, transformers, trl, datasets; ray; gym; inspect; verifiers) are
  # installed where they can be: their tests skip without them.
  if [ -x .venv/bin/uv ] && uv_install "$ALL"; then
    return 0
  fi
  [ ! -x .venv/bin/uv ] || echo "bootstrap: uv failed (above); pip installs the venv" >&2
  pip_install -U pip
  if ! pip_install -e "$ALL"; then
    echo "bootstrap: the optional extras (train: torch==2.13.0 CPU build, ray, gym, inspect, verifiers) could not all be installed; their tests will skip" >&2
    { [ -x .venv/bin/uv ] && uv_install ".[dev]"; } || pip_install -e ".[dev]"
  fi
}

# Sandboxed agent code runs `python -s -B`: it reads bytecode caches but never writes them, so without
# caches every sandbox start compiles numpy, ifcopenshell and buildbench from source again (~0.25 s CPU
# each, hundreds of starts in the tests). Compiling just those takes seconds; all of site-packages, minutes.
compile_sandbox_imports() {
  local site
  site="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  .venv/bin/python -m compileall -q -j0 "$site/numpy" "$site/ifcopenshell" src/buildbench >/dev/null ||
    echo "bootstrap: some modules could not be precompiled; they compile on first use" >&2
  # Ray (the extra): every Ray process (the driver's import, each worker, the cluster's own daemons) imports
  # its core; from source that is 1.05-1.29 CPU s per process, 0.45-0.65 s from caches (a local cluster's
  # start 18 s -> 8-11 s wall at load 14). Its libraries (rllib, tune...) are never imported here.
  if [ -d "$site/ray" ]; then
    .venv/bin/python -m compileall -q -j0 -x 'ray/(rllib|tune|serve|data|train|air)/' "$site/ray" >/dev/null ||
      echo "bootstrap: some of Ray could not be precompiled; it compiles on first use" >&2
  fi
}

stamp=.venv/.buildbench-stamp
# setup.py and the C sources: a changed tick loop (BuildArena physics/_tick.c, _welds.c/.h) or rasterizer
# (render/_raster.c) is rebuilt by the reinstall.
want="$(cat pyproject.toml constraints.txt setup.py src/buildbench/suites/buildarena/physics/_tick.c src/buildbench/suites/buildarena/physics/_welds.c src/buildbench/suites/buildarena/physics/_welds.h src/buildbench/render/_raster.c | sha256sum | cut -c1-16)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x .venv/bin/buildbench ]; then
  compile_sandbox_imports
  exit 0
fi
install_venv
compile_sandbox_imports
echo "$want" > "$stamp"
echo "bootstrap: .venv ready"
