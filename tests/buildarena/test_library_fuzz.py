"""A seeded slice of the library fuzz run (``tools/buildarena_fuzz.py``): no native crash, no escaped exception.

The slice's seeds include 1196, whose call 107 killed the process with a
segmentation fault (a NaN collider in python-fcl) before colliders were
checked; an assembly slice (machines saved, then assembled) follows. The
full run is a developer task, see ``tools/buildarena_oracle/README.md``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "buildarena_fuzz.py"


def test_fuzz_slice_of_both_profiles_ends_cleanly() -> None:
    result = subprocess.run([sys.executable, str(TOOL), "--calls", "1500", "--seed", "1190", "--batch", "10"],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout.splitlines()[-1])
    for profile in ("released", "default"):
        assert summary[profile]["calls"] >= 1500 and summary[profile]["crashes"] == []
        assert summary[profile]["escaped"] == []
        assert summary[profile]["seeds"].startswith("1190:")


def test_fuzz_slice_of_assemblies_ends_cleanly() -> None:
    # seed 138 put colliders at 1e308 into FCL (add_machine, call 62) and crashed it before FCL_LIMIT
    result = subprocess.run([sys.executable, str(TOOL), "--assembly", "--calls", "300", "--seed", "135", "--batch", "4"],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout.splitlines()[-1])
    assert all(summary[p]["calls"] >= 300 and not summary[p]["crashes"] for p in ("released", "default"))
