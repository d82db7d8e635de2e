#!/usr/bin/env bash
# Idempotent setup of real Blender as a Python module, for the DreamHouse `blender` executor.
#
# The `bpy` wheel is built for CPython 3.11 only and needs numpy<2, so it lives in its own
# virtualenv (.venv-blender), never in the project's .venv. Re-running does nothing when the
# pinned version is already installed. Set BUILDBENCH_SKIP_BLENDER=1 to skip entirely (the
# conformance tests then skip and say so).
set -euo pipefail
cd "$(dirname "$0")/.."

BPY_VERSION="5.0.1"   # the version the notes measured (../shared/notes/rendering.md)
VENV=.venv-blender
PYTHON="${BLENDER_PYTHON:-python3.11}"
# Shared libraries the bpy wheel links against (X11 client libs and libGL, even when headless).
APT_PACKAGES=(libx11-6 libxrender1 libxfixes3 libxi6 libxkbcommon0 libxext6 libsm6 libice6 libgl1)

if [ "${BUILDBENCH_SKIP_BLENDER:-0}" = 1 ]; then
  echo "setup_blender: skipped (BUILDBENCH_SKIP_BLENDER=1)"
  exit 0
fi

source tools/apt.sh
ensure_apt_packages setup_blender "${APT_PACKAGES[@]}"

stamp="$VENV/.bpy-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$BPY_VERSION" ] && [ -x "$VENV/bin/python" ]; then
  exit 0
fi
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "setup_blender: $PYTHON not found; the bpy wheel needs CPython 3.11 (set BLENDER_PYTHON)" >&2
  exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  echo "setup_blender: $PYTHON is not CPython 3.11; the bpy wheel is built for 3.11 only" >&2
  exit 1
fi
# A venv whose creation was cut short (Ctrl-C, a killed job) has its python but no pip: made again.
[ -x "$VENV/bin/python" ] && "$VENV/bin/python" -m pip --version >/dev/null 2>&1 || "$PYTHON" -m venv --clear "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "bpy==$BPY_VERSION" "numpy>=1.26,<2"
# A trial import proves the shared libraries are all there before we call it ready.
"$VENV/bin/python" -c 'import bpy, sys; sys.exit(0 if bpy.app.version >= (4, 2, 0) else 1)' >/dev/null 2>&1 || {
  echo "setup_blender: 'import bpy' failed in $VENV; run: $VENV/bin/python -c 'import bpy'" >&2
  exit 1
}
echo "$BPY_VERSION" > "$stamp"
echo "setup_blender: $VENV ready (bpy $BPY_VERSION)"
