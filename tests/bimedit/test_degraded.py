"""The ``degraded`` calibration agent: the reference edit with a growing fraction of its parts
wrong scores monotonically lower on every BIM-Edit axis, through the env's code tool."""

from __future__ import annotations

import pytest

from buildbench.harness import RunConfig, Runner, Store
from buildbench.suites.bimedit.degrade import degraded_code

FRACTIONS = (0.0, 0.25, 0.5, 0.75, 1.0)
KEYS = ("solved", "final", "geometry", "semantics", "topology")


def _row(tmp_path, fraction: float) -> dict[str, float]:
    out = tmp_path / str(fraction)
    Runner(RunConfig(suite="bimedit", agent="degraded", protocol="tool-loop", split="demo", seed=0, workers=0,
                     options={"degrade": fraction}), out).run()
    with Store(out) as store:
        episodes = list(store.episodes())
    assert episodes and all(ep.status == "ok" for ep in episodes), [ep.error for ep in episodes]
    return {k: sum(ep.metrics[k] for ep in episodes) / len(episodes) for k in KEYS}


@pytest.mark.timeout(300)
def test_every_axis_falls_monotonically_with_the_fraction(tmp_path):
    rows = [_row(tmp_path, f) for f in FRACTIONS]
    assert rows[0] == dict.fromkeys(KEYS, 1.0)
    for key in KEYS:
        values = [row[key] for row in rows]
        assert all(b <= a + 1e-9 for a, b in zip(values, values[1:], strict=False)), (key, values)
        assert values[0] - values[-1] >= 0.5, (key, values)


def test_the_code_names_its_seed_and_fraction_and_keeps_the_reference():
    code = degraded_code("x = 1\n", operation="delete", targets=("b", "a"), fraction=0.25, seed=7)
    assert "Random(7)" in code and "0.25 * n" in code and "['a', 'b']" in code and "\nx = 1\ncommit()\n" in code
    compile(code, "degraded", "exec")
