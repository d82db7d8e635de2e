#!/usr/bin/env bash
# Extract the released evaluation scripts (Runder-sun/SceneReVis, commit b1084e0, MIT) the mesh
# oracle runs, and install the three packages they import that buildbench does not need
# (tqdm, matplotlib, and 'triangle', the engine voxel_eval.py asks trimesh to triangulate the
# floor with) into a side folder, so the project's .venv is left as it is.
# Usage: setup.sh GIT_DIR WORK
set -euo pipefail
git_dir=${1:?usage: setup.sh GIT_DIR WORK}
work=${2:?usage: setup.sh GIT_DIR WORK}
commit=b1084e0
mkdir -p "$work/eval"
for path in eval/myeval.py eval/voxel_eval.py; do
    git --git-dir="$git_dir" show "$commit:$path" > "$work/$path"
done
here=$(cd "$(dirname "$0")/../.." && pwd)
"$here/.venv/bin/pip" install -q --target "$work/pylib" triangle tqdm matplotlib contourpy cycler fonttools \
    kiwisolver pyparsing python-dateutil
echo "released eval scripts of $commit and their extra packages in $work"
