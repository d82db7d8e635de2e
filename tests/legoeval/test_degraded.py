"""The ``degraded`` calibration evaluator: agreement with the labels falls monotonically with
``-o degrade``, from the deterministic evaluator's at fraction 0 to none at 1.

The sweep judges the first four demo tasks (two pairs, each an aligned and a misaligned scene, so
both holistic labels occur) at three fractions; how flips nest as the fraction grows is checked on one outcome below."""

from __future__ import annotations

import pytest

from buildbench.harness import RunConfig, Runner, Store
from buildbench.suites.legoeval.degrade import flip_verdicts
from buildbench.suites.legoeval.report import holistic_from_episodes, partial_from_episodes

FRACTIONS = (0.0, 0.25, 0.5, 0.75, 1.0)
SWEEP = (0.0, 0.5, 1.0)
N_TASKS = 4


def _row(tmp_path, fraction: float) -> dict[str, float]:
    out = tmp_path / str(fraction)
    Runner(RunConfig(suite="legoeval", agent="degraded", protocol="evaluate", split="demo", limit=N_TASKS, seed=0, workers=0,
                     options={"degrade": fraction}), out).run()
    with Store(out) as store:
        episodes = list(store.episodes())
    assert [ep.status for ep in episodes] == ["ok"] * N_TASKS
    hol, part = holistic_from_episodes(episodes), partial_from_episodes(episodes)
    return {"holistic_correct": sum(ep.metrics["holistic_correct"] for ep in episodes) / N_TASKS,
            "partial_accuracy": sum(ep.metrics["partial_accuracy"] for ep in episodes) / N_TASKS,
            "hol_f1": hol.f1, "part_f1": part.f1, "part_accuracy": part.accuracy}


@pytest.mark.timeout(120)
def test_agreement_falls_monotonically_from_the_deterministic_evaluator_to_none(tmp_path):
    rows = [_row(tmp_path, f) for f in SWEEP]
    for key in rows[0]:
        values = [row[key] for row in rows]
        assert all(b <= a + 1e-9 for a, b in zip(values, values[1:], strict=False)), (key, values)
        assert values[0] == 1.0 and values[-1] <= 0.05, (key, values)


def test_flips_are_nested_and_leave_unjudged_verdicts_alone():
    outcome = {"verdicts": [{"id": str(i), "holds": i % 3 != 0 if i != 5 else None, "explanation": ""}
                            for i in range(10)], "valid": False}
    flipped = [flip_verdicts(outcome, f, seed=11) for f in FRACTIONS]
    changed = [{v["id"] for v, o in zip(fl["verdicts"], outcome["verdicts"], strict=True) if v["holds"] != o["holds"]}
               for fl in flipped]
    assert all(a <= b for a, b in zip(changed, changed[1:], strict=False))
    assert changed[0] == set() and changed[-1] == {str(i) for i in range(10)} - {"5"}
    assert (flipped[0]["valid"], flipped[-1]["valid"]) == (False, True)
    assert flipped[-1]["verdicts"][5]["holds"] is None
