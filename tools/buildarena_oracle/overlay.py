"""Compare two recordings of the original (one CPU class against another) and write a class overlay.

The original's answers depend on the CPU class where a number sits on a rounding edge (0.295
printed as 0.29 or 0.3, a pitch of -0.0 or 0.0) or two blocks just touch: numpy's kernels round
the last bits per instruction set. A recording made again on another class therefore differs
in a few sequences. This tool lists every call whose answer (result or exception line), block
ids after the call or saved history (``to_file``) differ, and with ``--write`` saves them as that
class's overlay, one line per differing seed: ``{"seed": S, "calls": {WHERE: CALL}}`` with the
fresh call records (``WHERE`` as ``calls`` below names them), or ``{"seed": S, "sequence": SEQ}``
when the calls themselves part (the generator drew from a state the answers changed).
``tests/buildarena/conftest.py`` puts them in place of the committed ones on that class. Runs
under any Python 3 (stdlib)::

    python3 tools/buildarena_oracle/overlay.py tests/buildarena/data/differential-dev.jsonl.gz \\
        /tmp/dev.jsonl --write tests/buildarena/data/differential-dev.x86_64-authenticamd-x86_v3.overlay.jsonl.gz

With ``--partial`` only the seeds the fresh run holds are compared (a re-run of chosen seeds, for
example those where our library differs from the committed answers: ``compare.py
--differing-seeds``); a seed the original's process died on is then named by ``run_original.py``
on stderr, and left to the reader. Otherwise a seed the committed set holds but the fresh run left out (the original's process died on it
here) is written as ``{"seed": S, "left_out": true}``; a seed only the fresh run holds is named
and not written (the committed set decides which seeds are measured).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def load(path: Path) -> list[dict[str, Any]]:
    """Recorded sequences from a .jsonl or .jsonl.gz file."""
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def calls(sequence: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, call)`` for each call: ``"12"`` in a machine recording, ``"1/12"`` (session 1, call 12) in an
    assembly one (by position: machine names may differ only in case or spaces)."""
    if "sessions" in sequence:
        for number, session in enumerate(sequence["sessions"]):
            for index, call in enumerate(session["calls"]):
                yield f"{number}/{index}", call
    else:
        for index, call in enumerate(sequence["calls"]):
            yield str(index), call


def _answer(call: dict[str, Any]) -> tuple[Any, ...]:
    # what the tests compare: the answer line, the ids after the call and what to_file saved
    return (call["op"], call.get("params"), call.get("exception") or call.get("result"), call.get("ids_after"),
            call.get("written"))


def differing_calls(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls of one seed whose answers differ; once the call sequences part (the generator drew
    from a different state), the rest of the sequence counts as one difference at the parting call."""
    found = []
    old_calls, new_calls = list(calls(old)), list(calls(new))
    for (where, a), (_, b) in zip(old_calls, new_calls, strict=False):
        if (a["op"], a.get("params")) != (b["op"], b.get("params")):
            found.append({"at": where, "op": a["op"], "parted": True})
            return found
        if _answer(a) != _answer(b):
            found.append({"at": where, "op": a["op"], "old": a.get("exception") or a.get("result"),
                          "new": b.get("exception") or b.get("result"),
                          "ids": a.get("ids_after") == b.get("ids_after")})
    if len(old_calls) != len(new_calls):
        found.append({"at": str(min(len(old_calls), len(new_calls))), "op": "", "parted": True})
    return found


def _short(text: Any, limit: int = 240) -> str:
    flat = json.dumps(text, ensure_ascii=False)
    return flat if len(flat) <= limit else flat[:limit] + "..."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("committed", type=Path)
    parser.add_argument("fresh", type=Path)
    parser.add_argument("--write", type=Path, help="write the differing fresh sequences here (.jsonl.gz)")
    parser.add_argument("--show", type=int, default=40, help="print at most this many differing calls")
    parser.add_argument("--partial", action="store_true",
                        help="the fresh run holds only some seeds (run_original.py --seeds FILE): compare those")
    args = parser.parse_args()
    new = {seq["seed"]: seq for seq in load(args.fresh)}
    old = {seq["seed"]: seq for seq in load(args.committed) if not args.partial or seq["seed"] in new}
    overlay: list[dict[str, Any]] = []
    shown = total_calls = differing = 0
    for seed, seq in old.items():
        if seed not in new:
            overlay.append({"seed": seed, "left_out": True})
            print(f"seed {seed}: not in the fresh recording (left out)")
            continue
        total_calls += sum(1 for _ in calls(seq))
        found = differing_calls(seq, new[seed])
        if not found:
            continue
        if any(item.get("parted") for item in found):  # the calls themselves differ: the whole sequence
            overlay.append({"seed": seed, "sequence": new[seed]})
        else:  # only the differing calls, whole (op and params let the reader check where they go)
            fresh = dict(calls(new[seed]))
            overlay.append({"seed": seed, "calls": {item["at"]: fresh[item["at"]] for item in found}})
        differing += len(found)
        for item in found:
            if shown < args.show:
                print(f"seed {seed} call {item['at']} {item['op']}: " + (
                    "the call sequences part here" if item.get("parted") else
                    f"ids {'same' if item['ids'] else 'differ'}\n  old {_short(item['old'])}\n  new {_short(item['new'])}"))
            shown += 1
    for seed in sorted(set(new) - set(old)):
        print(f"seed {seed}: only in the fresh recording (not written)")
    print(json.dumps({"sequences": len(old), "calls": total_calls, "sequences_differing": len(overlay),
                      "calls_differing": differing, "fresh_only": len(set(new) - set(old))}))
    if args.write:
        # mtime 0: the same overlay gives the same bytes (a re-recording shows in git only if answers changed)
        with args.write.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as fh:
            fh.write("".join(json.dumps(seq) + "\n" for seq in overlay).encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
