"""Agreement of our LEGO-Eval tools with the original's recorded answers, per tool.

Run with the project's environment::

    .venv/bin/python tools/legoeval_oracle/compare.py [--default] [--misses FILE] [RECORDING ...]

Replays ``tests/legoeval/data/differential-original-tools.jsonl`` with the comparison rules
and listed differences of ``tests/legoeval/test_original_agreement.py`` (loaded from its
path, so both always use the same rules) in the original-compatible mode, or with
``--default`` in the default mode, and prints per tool the exact agreement, the agreement
counting the listed differences, and the number of disagreements; ``--misses FILE`` writes
every disagreeing call as JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "tests" / "legoeval" / "test_original_agreement.py"


def rules() -> Any:
    spec = importlib.util.spec_from_file_location("legoeval_original_agreement", RULES)
    if spec is None or spec.loader is None:
        raise SystemExit(f"error: cannot load {RULES}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--default", action="store_true", help="our default mode instead of the compatible one")
    ap.add_argument("--misses", type=Path, help="write the disagreeing calls here (JSON)")
    ap.add_argument("recordings", nargs="*", type=Path, help="other recordings than the committed plain one")
    args = ap.parse_args()
    r = rules()
    calls = [c for path in args.recordings for c in r.load_calls(path)] if args.recordings else r.load_calls()
    compatible = not args.default
    misses: list[dict[str, Any]] = []
    listed: Counter[str] = Counter()
    table: dict[str, Counter[str]] = {}
    for call in calls:
        name, diffs = r.verdict(call, compatible)
        table.setdefault(call.tool, Counter())[name] += 1
        if name == "disagree":
            misses.append({"house": call.house, "tool": call.tool, "args": call.args, "diffs": diffs})
        elif name != "agree":
            listed[name] += 1
    print(f"{'compatible' if compatible else 'default'} mode, {len(calls)} calls")
    print(r.report(table))
    print("listed differences: " + ", ".join(f"{k} {v}" for k, v in sorted(listed.items())))
    if args.misses:
        args.misses.write_text(json.dumps(misses, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
