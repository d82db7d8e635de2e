#!/usr/bin/env bash
# Extract the released SceneReVis files the oracle runs from a clone or mirror of
# Runder-sun/SceneReVis (commit b1084e0). Usage: setup.sh GIT_DIR WORK
# The project's own .venv has every package they import (numpy, scipy, shapely, trimesh,
# python-fcl, Pillow), so no separate environment is needed.
set -euo pipefail
git_dir=${1:?usage: setup.sh GIT_DIR WORK}
work=${2:?usage: setup.sh GIT_DIR WORK}
commit=b1084e0
mkdir -p "$work"
for path in utils/scene_editor.py utils/RL_utils.py infer.py script/RL/scene_editing_interaction.py; do
    mkdir -p "$work/$(dirname "$path")"
    git --git-dir="$git_dir" show "$commit:$path" > "$work/$path"
done
echo "released files of $commit in $work"
