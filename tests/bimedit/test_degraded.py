"""The ``degraded`` calibration agent: the reference edit with a growing fraction of its parts
wrong scores monotonically lower on every BIM-Edit axis, through the env's code tool.

The sweep plays one ``demo`` task of each operation (door update, room/wall create, wall delete;
the direct-reference variant) at three fractions. Close fractions are left out: the door update's
geometry is 0.40 at 0.25 and 0.47 at 0.5 (the mean over all 12 demo tasks still fell), so a
metric is not monotone per episode at every step."""

from __future__ import annotations

import json

import pytest

from buildbench.harness import RunConfig, Runner, Store, get_suite
from buildbench.suites.bimedit.degrade import degraded_code

SWEEP = (0.0, 0.5, 1.0)
KEYS = ("solved", "final", "geometry", "semantics", "topology")
TASKS = ("DOR-UPD-DIR-A-001", "ROM-CRE-DIR-A-001", "WAL-CRE-DIR-A-001", "WAL-DEL-DIR-A-001")


def _row(tmp_path, fraction: float) -> dict[str, float]:
    tasks = tmp_path / "tasks.jsonl"
    if not tasks.exists():
        demo = {t.id: t for t in get_suite("bimedit").load_tasks("demo", 0)}
        tasks.write_text("".join(json.dumps(demo[i].to_dict()) + "\n" for i in TASKS))
    out = tmp_path / str(fraction)
    Runner(RunConfig(suite="bimedit", agent="degraded", protocol="tool-loop", tasks=str(tasks), seed=0, workers=0,
                     options={"degrade": fraction}), out).run()
    with Store(out) as store:
        episodes = list(store.episodes())
    assert len(episodes) == len(TASKS) and all(ep.status == "ok" for ep in episodes), [ep.error for ep in episodes]
    return {k: sum(ep.metrics[k] for ep in episodes) / len(episodes) for k in KEYS}


@pytest.mark.timeout(300)
def test_every_axis_falls_monotonically_with_the_fraction(tmp_path):
    rows = [_row(tmp_path, f) for f in SWEEP]
    assert rows[0] == dict.fromkeys(KEYS, 1.0)
    for key in KEYS:
        values = [row[key] for row in rows]
        assert all(b <= a + 1e-9 for a, b in zip(values, values[1:], strict=False)), (key, values)
        assert values[0] - values[-1] >= 0.5, (key, values)


def test_the_code_names_its_seed_and_fraction_and_keeps_the_reference():
    code = degraded_code("x = 1\n", operation="delete", targets=("b", "a"), fraction=0.25, seed=7)
    assert "Random(7)" in code and "0.25 * n" in code and "['a', 'b']" in code and "\nx = 1\ncommit()\n" in code
    compile(code, "degraded", "exec")
