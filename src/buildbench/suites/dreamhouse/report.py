"""DreamHouse tables in the paper's layouts, with the published numbers beside ours.

* Table 1 (paper §4, spec §6.3): per model × protocol, structural pass, visual fidelity S,
  topological fidelity T and joint pass, each for Frame / Facade. Structural and joint
  pass are rates over all episodes (an episode that errored counts as not passing); S and
  T are means over the structurally passed episodes only, as in the paper.
* Figure 7 (paper §5): per-test failure rates per model × protocol × condition, and the
  most common co-failure patterns (the exact set of failed tests of a failing structure).
  The paper gives these only as a figure, so no published numbers sit beside them.

Our S comes from our renderer and colours, not Blender Cycles with the paper's (unstated)
materials, and our models are whatever ran; the published rows are context, not targets.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from buildbench.harness import Episode, is_scored, mean_metrics

#: Paper Table 1 verbatim (spec §6.3): (model, protocol) → Struct F/Fa, Visual F/Fa, Topo F/Fa, Joint F/Fa.
PAPER_TABLE1: dict[tuple[str, str], tuple[float, ...]] = {
    ("GPT-5", "planner-atomic"): (0.792, 0.637, 0.312, 0.287, 0.143, 0.151, 0.035, 0.019),
    ("GPT-5", "planner-reactive"): (0.302, 0.247, 0.293, 0.266, 0.141, 0.143, 0.003, 0.003),
    ("GPT-5", "planner-managed"): (0.333, 0.157, 0.179, 0.175, 0.178, 0.157, 0.008, 0.003),
    ("Claude", "planner-atomic"): (0.716, 0.779, 0.406, 0.377, 0.164, 0.168, 0.071, 0.064),
    ("Claude", "planner-reactive"): (0.428, 0.494, 0.239, 0.245, 0.133, 0.141, 0.003, 0.013),
    ("Claude", "planner-managed"): (0.713, 0.737, 0.278, 0.291, 0.205, 0.190, 0.031, 0.022),
    ("Gemini", "planner-atomic"): (0.454, 0.539, 0.376, 0.394, 0.171, 0.170, 0.031, 0.036),
    ("Gemini", "planner-reactive"): (0.507, 0.376, 0.345, 0.342, 0.160, 0.152, 0.019, 0.013),
    ("Gemini", "planner-managed"): (0.785, 0.737, 0.313, 0.282, 0.232, 0.211, 0.043, 0.026),
}
#: Table 1 column groups in the paper's order: (title, metric key); each cell reads "Frame / Facade".
TABLE1_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Struct F / Fa", "structural_pass"),
    ("Visual F / Fa", "visual_fidelity"),
    ("Topo F / Fa", "topological_fidelity"),
    ("Joint F / Fa", "joint_pass"),
)
CONDITION_ORDER: tuple[str, str] = ("frame", "facade")
#: Metrics averaged only over structurally passed episodes (paper §4).
PASSED_ONLY = frozenset({"visual_fidelity", "topological_fidelity"})
#: Co-failure patterns listed per group.
TOP_PATTERNS = 8
_MISSING = "–"

Labeller = Callable[[Episode], str]


def model_of(episode: Episode) -> str:
    """The episode's model label: ``metadata["model"]`` when set (see :func:`runs_summary`), else its agent."""
    return str(episode.metadata.get("model") or episode.agent)


def condition_of(episode: Episode) -> str:
    """The episode's condition (``frame`` unless its outcome says ``facade``)."""
    return str(episode.outcome.get("condition") or "frame")


def group_mean(episodes: Sequence[Episode], key: str) -> float | None:
    """Table 1 cell: rate over the scored episodes, or for S/T the mean over passed ones; None if undefined."""
    if not episodes:
        return None
    if key in PASSED_ONLY:
        values = [
            ep.metrics[key]
            for ep in episodes
            if is_scored(ep)
            and ep.metrics.get("structural_pass") == 1.0
            and _finite(ep.metrics.get(key))
        ]
        return sum(values) / len(values) if values else None
    scored = [ep for ep in episodes if is_scored(ep)]
    return sum(float(ep.metrics.get(key, 0.0)) for ep in scored) / len(scored) if scored else None


def table1_rows(episodes: Sequence[Episode], label: Labeller | None = None) -> list[dict[str, Any]]:
    """Table 1: our rows (one per model label × protocol, both conditions), then the paper's.

    Cells read "Frame / Facade" (3 decimals, "–" where no episode defines the value); use
    :func:`group_mean` for the numbers themselves.

    Args:
        episodes: Episodes of any number of runs.
        label: Model label of an episode; by default :func:`model_of`.
    """
    label = label or model_of
    groups: dict[tuple[str, str], dict[str, list[Episode]]] = {}
    for ep in episodes:
        groups.setdefault((label(ep), ep.protocol), {}).setdefault(condition_of(ep), []).append(ep)
    rows = []
    for (model, protocol), by_cond in sorted(groups.items()):
        row: dict[str, Any] = {"source": "ours", "model": model, "protocol": protocol}
        for title, key in TABLE1_COLUMNS:
            row[title] = _pair(*(group_mean(by_cond.get(c, []), key) for c in CONDITION_ORDER))
        row["N F / Fa"] = " / ".join(str(len(by_cond.get(c, []))) for c in CONDITION_ORDER)
        rows.append(row)
    for (model, protocol), values in PAPER_TABLE1.items():
        row = {"source": "paper", "model": model, "protocol": protocol}
        for k, (title, _) in enumerate(TABLE1_COLUMNS):
            row[title] = _pair(values[2 * k], values[2 * k + 1])
        row["N F / Fa"] = "1200 / 1200"
        rows.append(row)
    return rows


def failure_rate_rows(episodes: Sequence[Episode], label: Labeller | None = None) -> list[dict[str, Any]]:
    """Figure 7 (left): per test, the failure rate in each model × protocol × condition group.

    Rates are over the group's scored episodes (errored ones have no test results).
    """
    groups = _groups(episodes, label)
    tests = sorted({k for ep in episodes for k in ep.metrics if k.startswith("test_")})
    rows = []
    for test in tests:
        row: dict[str, Any] = {"test": test.removeprefix("test_")}
        for name, eps in groups.items():
            scored = [ep for ep in eps if test in ep.metrics]
            row[name] = _cell(sum(ep.metrics[test] == 0.0 for ep in scored) / len(scored) if scored else None)
        rows.append(row)
    return rows


def co_failure_rows(
    episodes: Sequence[Episode], label: Labeller | None = None, top: int = TOP_PATTERNS
) -> list[dict[str, Any]]:
    """Figure 7 (right): the most common sets of failed tests among failing structures, per group."""
    rows = []
    for name, eps in _groups(episodes, label).items():
        patterns: Counter[str] = Counter()
        for ep in eps:
            failed = sorted(
                k.removeprefix("test_") for k, v in ep.metrics.items() if k.startswith("test_") and v == 0.0
            )
            if failed:
                patterns[" + ".join(failed)] += 1
        total = sum(patterns.values())
        for pattern, count in patterns.most_common(top):
            rows.append(
                {"group": name, "failed tests": pattern, "count": count, "share of failures": count / total}
            )
    return rows


def tables(episodes: Sequence[Episode], label: Labeller | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every table, titled (the harness prints ``report["tables"]``)."""
    return {
        "Table 1: structural / visual S / topological T / joint pass, Frame (F) and Facade (Fa)": table1_rows(
            episodes, label
        ),
        "Figure 7: per-test failure rate": failure_rate_rows(episodes, label),
        "Figure 7: co-failure patterns (failing structures)": co_failure_rows(episodes, label),
    }


def summarize(episodes: Sequence[Episode]) -> dict[str, Any]:
    """The suite summary: the harness's means plus :func:`tables` (``buildbench report`` prints both)."""
    out = mean_metrics(episodes)
    out["tables"] = tables(episodes)
    return out


def runs_summary(run_dirs: Sequence[str | Path]) -> dict[str, list[dict[str, Any]]]:
    """:func:`tables` over the episodes of several stored runs; the model label is the run's
    ``--model`` when it had one, else its agent.

    Raises:
        BuildbenchError: When a folder is not a stored run.
    """
    from buildbench.harness import Store

    episodes: list[Episode] = []
    for run_dir in run_dirs:
        with Store(run_dir, create=False) as store:
            model = store.manifest().get("config", {}).get("model")
            for ep in store.episodes():
                if model:
                    ep.metadata["model"] = str(model)
                episodes.append(ep)
    return tables(episodes)


def print_tables(titled: dict[str, list[dict[str, Any]]]) -> None:
    """Print titled row lists as terminal tables (floats to 3 decimals)."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for title, rows in titled.items():
        if not rows:
            console.print(f"{title}: no rows")
            continue
        table = Table(title=title)
        for col in rows[0]:
            table.add_column(str(col))
        for row in rows:
            table.add_row(*(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()))
        console.print(table)


def _groups(episodes: Sequence[Episode], label: Labeller | None) -> dict[str, list[Episode]]:
    label = label or model_of
    out: dict[str, list[Episode]] = {}
    for ep in episodes:
        out.setdefault(f"{label(ep)}/{ep.protocol}/{condition_of(ep)}", []).append(ep)
    return dict(sorted(out.items()))


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _cell(value: float | None) -> float | str:
    return _MISSING if value is None else float(value)


def _pair(frame: float | None, facade: float | None) -> str:
    """A Table 1 cell, "Frame / Facade" to 3 decimals as the paper prints them."""
    return " / ".join(_MISSING if v is None else f"{v:.3f}" for v in (frame, facade))
