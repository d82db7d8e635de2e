"""DreamHouse: what saving the whole scene after each accepted script costs, and getting it back.

The env saves the executor's scene after each accepted script (``Executor.save_scene``) and,
after a failed script or a lost process, opens it in a fresh process (``load_scene``) instead of
running the accepted scripts again (which repeated their side effects). Two figures on the fast
executor, a frame of ``MEMBERS`` members built by ``STEPS`` accepted scripts:

- the save per accepted step, beside running one such script (the baseline): the save must stay
  small next to it;
- getting the scene back after a failure (a fresh process opening the saved scene), beside the
  earlier way on the same scene (``reset()`` in the process and the ``STEPS`` scripts again), timed in
  the same run. A fresh process is a sandbox start: on a loaded machine it dominates.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from _common import Figure, median_time

from buildbench.suites.dreamhouse.executors import make_executor
from buildbench.suites.dreamhouse.model import Member, Structure
from buildbench.suites.dreamhouse.scripts import structure_to_bpy

MEMBERS = 300
STEPS = 5
COLLECTION = "C1"


def _scripts() -> list[str]:
    """``STEPS`` scripts, each adding its share of posts to the collection."""
    per = MEMBERS // STEPS
    return [structure_to_bpy(Structure.from_members([
        Member.box(f"Post_{k}_{i}", (0.089, 0.089, 2.4), (i * 0.4, k * 1.2, 1.2), (0, 0, 0)) for i in range(per)
    ]), COLLECTION) for k in range(STEPS)]


def _ok(result: object) -> None:
    if not getattr(result, "ok", False):
        raise RuntimeError(f"the fast executor failed the benchmark: {getattr(result, 'error', result)}")


def run() -> list[Figure]:
    """Time the save and the restore beside running the scripts."""
    scripts = _scripts()
    with tempfile.TemporaryDirectory(prefix="bench-dh-scene-") as folder, \
            make_executor("fast", collection=COLLECTION) as ex:
        for code in scripts:
            _ok(ex.run(code))
        saved: list[Path] = []

        def save() -> None:
            path = ex.save_scene(Path(folder))
            if path is None:
                raise RuntimeError("the fast executor did not save the scene")
            saved.append(path)

        save_s = median_time(save)
        last = saved[-1]

        def restore() -> None:
            ex.restart()
            _ok(ex.load_scene(last))

        def replay() -> None:
            ex.reset()
            for code in scripts:
                _ok(ex.run(code))

        restore_s = median_time(restore, repeat=5)
        replay_s = median_time(replay, repeat=5)
        load_in_place_s = median_time(lambda: _ok(ex.load_scene(last)), repeat=5)
        size = last.stat().st_size
        script_s = median_time(lambda: _ok(ex.run(scripts[-1])))  # last: it adds to the scene
    extra = {"members": MEMBERS, "steps": STEPS, "saved_bytes": size,
             "load_in_place_s": round(load_in_place_s, 4), "load_average_1min": round(os.getloadavg()[0], 2)}
    return [
        Figure("dreamhouse scene save per accepted step (fast, 300 members)", save_s,
               baseline=f"running one of the {STEPS} scripts", baseline_seconds=script_s, extra=extra),
        Figure("dreamhouse scene back after a failure (fresh process + saved scene)", restore_s,
               baseline=f"reset + the {STEPS} accepted scripts again, in place", baseline_seconds=replay_s, extra=extra),
    ]


if __name__ == "__main__":
    for figure in run():
        print(figure.to_dict())
