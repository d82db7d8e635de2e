"""Dev tool: derive the SceneReVis suite's shipped package data from the shared originals.

Run from the repository root (needs ../shared, read only here, never at run time):

    .venv/bin/python tools/scenerevis_assets.py [SHARED_DIR]

Writes, under ``src/buildbench/suites/scenerevis/data/``:

* ``assets_3dfuture.json``: the 16,561 3D-FUTURE asset descriptions with their categories
  as ``[[description, category], ...]`` in the original order (compact JSON), with the source
  and licence (MIT, Runder-sun/SceneReVis) recorded in the file;
* ``prompts/{bedroom,living_room,dining_room,study_room}.txt``: the paper's 400 evaluation
  prompts, one per line, copied verbatim;
* ``LICENSE-SceneReVis.txt``: the MIT licence those files are distributed under.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "buildbench" / "suites" / "scenerevis" / "data"
SOURCE = "Runder-sun/SceneReVis@b1084e0eb4a1b33d7033be986ecda923228b0868"
ROOMS = ("bedroom", "living_room", "dining_room", "study_room")


def main(argv: list[str]) -> int:
    shared = Path(argv[1]) if len(argv) > 1 else ROOT / ".." / "shared"
    src = shared / "data" / "scenerevis"
    descs = json.loads((src / "model_info_3dfuture_assets_simple_descs.json").read_text())
    pairs = [[str(d).strip(), str(c).strip().lower()] for d, c in descs.items()]
    record = {"source": f"{SOURCE}: metadata/model_info_3dfuture_assets_simple_descs.json",
              "license": "MIT (see LICENSE-SceneReVis.txt)",
              "format": "[description, category] per 3D-FUTURE asset, original order",
              "assets": pairs}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "assets_3dfuture.json").write_text(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    (OUT / "prompts").mkdir(exist_ok=True)
    for room in ROOMS:
        shutil.copyfile(src / "split_prompts" / f"{room}.txt", OUT / "prompts" / f"{room}.txt")
    shutil.copyfile(src / "LICENSE", OUT / "LICENSE-SceneReVis.txt")
    print(f"wrote {len(pairs)} assets in {len({c for _, c in pairs})} categories and {len(ROOMS)} prompt files to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
