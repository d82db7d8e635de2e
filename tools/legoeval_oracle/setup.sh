#!/usr/bin/env bash
# Extract the original LEGO-Eval code from a clone or mirror of gyeomh/LEGO-EVAL into ORIG,
# and the names of its swatch images into ORIG/material_names.txt.
# Usage: tools/legoeval_oracle/setup.sh GIT_DIR ORIG [COMMIT]
set -euo pipefail
git_dir=${1:?GIT_DIR: the .git of a clone, or a bare mirror}
orig=${2:?ORIG (folder to write)}
commit=${3:-35c227c}
mkdir -p "$orig/evaluation/utils"
# the annotation file is an absent large blob in the public snapshot: prepare.py writes one
for f in $(git --git-dir="$git_dir" ls-tree -r --name-only "$commit" evaluation | grep -v obj_annotations); do
    mkdir -p "$orig/$(dirname "$f")"
    git --git-dir="$git_dir" show "$commit:$f" > "$orig/$f"
done
git --git-dir="$git_dir" ls-tree -r --name-only "$commit" floor_wall_material_image \
    | sed 's|.*/||; s|\.png$||' > "$orig/material_names.txt"
echo "original at $orig ($(wc -l < "$orig/material_names.txt") swatch names)"
