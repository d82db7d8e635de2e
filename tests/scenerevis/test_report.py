"""The report: the paper's tables as data beside our means; unscored episodes stay out."""

from __future__ import annotations

from buildbench.harness import Episode
from buildbench.suites.scenerevis import report


def episode(task: str, room: str, oob: float, col: float, status: str = "ok", **meta: str) -> Episode:
    return Episode(task_id=task, sample=0, suite="scenerevis", agent="diagnose", protocol="diagnose-act", seed=0,
                   status=status, metrics={"oob_rate": oob, "collision_rate": col, "voxel_loss_m3": 0.002},
                   outcome={"turns": 4, "invalid_replies": 1}, metadata={"room": room, **meta}, duration_s=2.0)


def test_tables_put_our_means_beside_the_paper():
    eps = [episode("a", "bedroom", 10.0, 20.0), episode("b", "bedroom", 0.0, 0.0),
           episode("c", "living_room", 5.0, 5.0), episode("d", "bedroom", 99.0, 99.0, status="error")]
    out = report.summarize(eps)
    t1 = out["tables"]["Table 1: bedroom / living room (OBR, CNR %; Ra, Spa, Ac, Avg 1-10)"]
    ours = {r["group"]: r for r in t1 if r["source"] == "ours: diagnose"}
    assert ours["bedroom"]["OBR"] == 5.0 and ours["bedroom"]["CNR"] == 10.0 and ours["bedroom"]["n"] == 2
    assert ours["mean"]["OBR"] == 5.0 and ours["mean"]["Ra"] == "–"
    paper = {(r["source"], r["group"]): r for r in t1}
    assert paper[("paper: SceneReVis", "mean")]["OBR"] == 2.0 and paper[("paper: LayoutGPT", "bedroom")]["CNR"] == 45.9
    assert not any(k.startswith("Table 2") or k.startswith("Table 3") for k in out["tables"])  # no such episodes
    t4 = out["tables"]["Table 4: ablation (VBL = voxel loss x 10^3, Phy = mean of OBR and CNR)"]
    assert t4[0]["VBL"] == 2.0 and t4[0]["Phy"] == round((5.0 + 25 / 3) / 2, 2)
    assert t4[-1] == {"source": "paper: + Physical optimisation", "n": "–", "VBL": 25.6, "Phy": 3.3, "Ra": 9.4,
                      "Spa": 8.0, "Ac": 8.9, "Avg": 8.8}
    episodes_row = out["tables"][next(k for k in out["tables"] if k.startswith("episodes"))][0]
    assert episodes_row["scored"] == 3 and episodes_row["unscored"] == 1 and episodes_row["invalid replies"] == 1.0


def test_goal_conditions_fill_table_3():
    eps = [episode("g1", "bedroom", 1.0, 2.0, condition="chaotic"), episode("g2", "bedroom", 3.0, 4.0,
                                                                             condition="missing")]
    t3 = report.summarize(eps)["tables"]["Table 3: goal-oriented optimisation (chaotic_missing = condition 1, "
                                         "chaotic = 2, missing = 3)"]
    ours = {r["group"]: r for r in t3 if r["source"].startswith("ours")}
    assert ours["chaotic"]["OBR"] == 1.0 and ours["chaotic_missing"]["OBR"] == "–" and ours["mean"]["CNR"] == 3.0
    assert report.PAPER_TABLE3["SceneReVis"]["chaotic_missing"][:2] == (1.1, 1.8)


def test_paper_tables_are_complete():
    for table, groups in ((report.PAPER_TABLE1, report.TABLE1_ROOMS), (report.PAPER_TABLE2, report.TABLE2_ROOMS),
                          (report.PAPER_TABLE3, report.CONDITIONS)):
        for method, cols in table.items():
            assert set(cols) == {*groups, "mean"}, method
            assert all(len(v) == len(report.COLUMNS) for v in cols.values()), method
