"""The ``degraded`` calibration agent: the reference designs with a growing fraction of their
calls dropped, moved or given the wrong block pass less, reach less and keep fewer parts, played
through the env like any design agent (short simulations, as the other suite tests).

The sweep plays the ``demo`` split (the Lv.1 task of each category) at three fractions: the
indicator is not monotone per episode (a broken machine may still lift or roll a little), so the
mean is checked where it is stable; that larger fractions only add corruption is checked call by
call on the Lv.1 and Lv.2 designs below."""

from __future__ import annotations

import pytest

from buildbench.harness import RunConfig, Runner, Store
from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.degrade import degrade_design

FRACTIONS = (0.0, 0.25, 0.5, 0.75, 1.0)
SWEEP = (0.0, 0.5, 1.0)
KEYS = ("passed", "indicator", "parts")


def _row(tmp_path, fraction: float) -> dict[str, float]:
    out = tmp_path / str(fraction)
    Runner(RunConfig(suite="buildarena", agent="degraded", protocol="workflow", split="demo", seed=0, workers=0,
                     options={"degrade": fraction, "sim_duration_s": 2.0}), out).run()
    with Store(out) as store:
        episodes = list(store.episodes())
    assert len(episodes) == 3 and all(ep.status == "ok" for ep in episodes), [ep.error for ep in episodes]
    return {k: sum(ep.metrics[k] for ep in episodes) / len(episodes) for k in KEYS}


@pytest.mark.timeout(300)
def test_pass_indicator_and_parts_fall_monotonically_with_the_fraction(tmp_path):
    rows = [_row(tmp_path, f) for f in SWEEP]
    for key in KEYS:
        values = [row[key] for row in rows]
        assert all(b <= a + 1e-9 for a, b in zip(values, values[1:], strict=False)), (key, values)
        assert values[-1] < 0.5 * values[0], (key, values)
    assert rows[-1]["passed"] == 0.0


def test_corruption_is_nested_and_zero_is_the_reference():
    design = designs.REFERENCE["support-1"]()
    assert degrade_design(design, 0.0, 5).calls == design.calls
    changed = []
    for f in FRACTIONS:
        calls = degrade_design(design, f, 5).calls
        changed.append(len(design.calls) - sum(1 for a, b in zip(calls, design.calls, strict=False) if a == b))
    assert changed == sorted(changed) and changed[-1] > 0
    assembled = designs.REFERENCE["support-2"]()
    degraded = degrade_design(assembled, 1.0, 5)
    assert degraded.saved is not None and set(degraded.saved) == set(assembled.saved or {})
    beam = (assembled.saved or {})["beam"]
    assert degraded.saved["beam"][0] == beam[0] and degraded.saved["beam"] != beam  # start kept, the rest hit
