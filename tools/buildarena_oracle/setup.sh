#!/usr/bin/env bash
# Prepare the oracle: the original BuildArena library at the pinned commit, in its own Python 3.12 venv.
# Usage: tools/buildarena_oracle/setup.sh GIT_DIR WORK_DIR
#   GIT_DIR  a clone (or bare mirror) of github.com/AI4Science-WestlakeU/BuildArena
#   WORK_DIR where the checkout (WORK_DIR/orig) and the venv (WORK_DIR/venv) go
set -euo pipefail
COMMIT=fc64b2b383251102961c9fde92789c3b45acae60
GIT_DIR=$1
WORK=$2
PYTHON=${PYTHON:-python3.12}
mkdir -p "$WORK/orig"
# Only the library, its block configs and the task files are needed (the mirror may lack large assets).
# One archive per tree: a pathspec archive of the commit still reads every blob (and fails on a partial mirror).
for dir in spatial blocks; do
    git --git-dir="$GIT_DIR" archive --prefix="$dir/" "$COMMIT:$dir" | tar -x -C "$WORK/orig"
done
for file in levels.yaml pyproject.toml; do
    git --git-dir="$GIT_DIR" show "$COMMIT:$file" > "$WORK/orig/$file"
done
"$PYTHON" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q numpy==2.5.5 numpy-quaternion==2024.0.13 trimesh==5.2.0 python-fcl==0.7.0.11 \
    pyyaml scipy pandas matplotlib
echo "oracle ready: $WORK/orig with $WORK/venv"
