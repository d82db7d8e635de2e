"""The figures read the suite's units like the report does: a headline share in % whose values
all happen to be 0 or 1 is no 0/1 flag, so the outcomes figure does not split it into solved and
failed episodes."""

from __future__ import annotations

from pathlib import Path

from buildbench.harness.episode import Episode
from buildbench.harness.figures import standard_figures


def _episodes(values: list[float]) -> list[Episode]:
    return [Episode(task_id=f"r{i}", sample=0, suite="scenerevis", agent="a", protocol="one-shot", seed=0,
                    metrics={"valid_placement": v}) for i, v in enumerate(values)]


def _outcome_kinds(units: dict[str, str] | None) -> list[str]:
    figures = dict(standard_figures({"run": _episodes([0.0, 1.0, 0.0])}, ["valid_placement"], units=units))
    return [t.get_text() for t in figures["outcomes"].axes[0].get_legend().get_texts()]


def test_a_share_in_percent_is_no_solved_flag_in_the_figures() -> None:
    assert _outcome_kinds({"valid_placement": "%"}) == ["scored"]
    assert _outcome_kinds({"valid_placement": "0/1"}) == ["solved", "failed"]
    assert _outcome_kinds(None) == ["solved", "failed"]  # no units: the values decide, as in cost.solved_flag


def test_report_figures_pass_the_suites_units(tmp_path: Path) -> None:
    from buildbench.harness.compare import write_run_figures
    from buildbench.harness.store import Store

    with Store(tmp_path / "run") as store:
        store.write_manifest({"config": {"suite": "scenerevis", "agent": "a", "protocol": "one-shot",
                                         "split": "default", "seed": 0, "samples": 1}, "tasks": 3})
        for ep in _episodes([0.0, 0.0, 0.0]):
            store.add_episode(ep)
    written = write_run_figures([tmp_path / "run"], tmp_path / "fig")
    svg = (tmp_path / "fig" / "outcomes.svg").read_text()
    assert tmp_path / "fig" / "outcomes.svg" in written
    assert "scored" in svg and "solved" not in svg and "failed" not in svg
