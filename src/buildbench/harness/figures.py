"""Figures of runs (``buildbench report RUNS… --figures DIR``): PNG and SVG, headless.

The standard set, for every suite:

* ``metrics`` — each headline metric per run, with its 95 % bootstrap interval;
* ``task_types`` — the first headline metric per task type (the suite's ``task_type`` key of
  the task metadata: BuildArena's category, DreamHouse's complexity…) per run;
* ``outcomes`` — how episodes ended per run: solved, scored but failed, and each unscored
  status;
* ``cost_quality`` — the first headline metric against tokens (or wall seconds when no model
  was called) per episode.

A suite adds its reproduced paper figures through ``Suite.figures`` (DreamHouse Fig. 7's
co-failures, BuildArena's failure kinds…). Every figure is drawn from the stored episodes
only, with a fixed style and no timestamps in the files, so the same runs give the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .cost import cost_summary, solved_flag
from .episode import Episode, is_scored
from .stats import mean_of, metric_intervals, metric_number

FigureList = list[tuple[str, Any]]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)  # headless: no display, no GUI toolkit
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "buildbench", "figure.dpi": 100, "font.size": 9})
    return plt


def _short(label: str, limit: int = 28) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def metrics_figure(groups: Mapping[str, Sequence[Episode]], headline: Sequence[str]) -> Any:
    """One panel per headline metric: a bar per run with its 95 % interval."""
    plt = _pyplot()
    intervals = {label: metric_intervals(eps) for label, eps in groups.items()}
    keys = [k for k in headline if any(k in iv for iv in intervals.values())][:6] or \
        sorted({k for iv in intervals.values() for k in iv})[:6]
    fig, axes = plt.subplots(1, max(len(keys), 1), figsize=(3.2 * max(len(keys), 1), 3.4), squeeze=False)
    labels = list(groups)
    for ax, key in zip(axes[0], keys, strict=False):
        means, lows, highs, ticks = [], [], [], []
        for label in labels:
            iv = intervals[label].get(key) or {"n": 0, "tasks": 0, "mean": math.nan, "low": math.nan,
                                               "high": math.nan}
            # A run without a value has no bar (a 0 would read as a result) and says n/a; an interval
            # that cannot be drawn (one task, an infinite value) has no error bar and says why.
            spread = iv["tasks"] > 1 and math.isfinite(iv["low"]) and math.isfinite(iv["high"])
            means.append(iv["mean"])
            lows.append(max(iv["mean"] - iv["low"], 0.0) if spread else 0.0)
            highs.append(max(iv["high"] - iv["mean"], 0.0) if spread else 0.0)
            note = "n/a" if not iv["n"] else f"n={iv['n']}" + ("" if spread or iv["tasks"] > 1 else ", 1 task")
            ticks.append(f"{_short(label)}\n{note}")
        ax.bar(range(len(labels)), [m if math.isfinite(m) else math.nan for m in means], yerr=[lows, highs],
               capsize=3, color="#4c72b0")
        ax.set_title(key)
        ax.set_xticks(range(len(labels)), ticks, rotation=30, ha="right")
    fig.suptitle("headline metrics (mean, 95 % bootstrap interval clustered by task)")
    fig.tight_layout()
    return fig


def task_type_figure(groups: Mapping[str, Sequence[Episode]], metric: str, type_key: str) -> Any:
    """The metric's mean per task type, one bar group per type, one bar per run."""
    plt = _pyplot()
    types = sorted({str(ep.metadata.get(type_key)) for eps in groups.values() for ep in eps
                    if ep.metadata.get(type_key) is not None})
    fig, ax = plt.subplots(figsize=(max(4.0, 1.0 + 0.9 * len(types) * max(len(groups), 1)), 3.4))
    width = 0.8 / max(len(groups), 1)
    for i, (label, eps) in enumerate(groups.items()):
        means = []
        for t in types:
            vals = [v for ep in eps if is_scored(ep) and str(ep.metadata.get(type_key)) == t
                    and (v := metric_number(ep.metrics.get(metric))) is not None]
            means.append(mean_of(vals))  # NaN, no bar, for a type without a value: not a 0
        ax.bar([x + i * width for x in range(len(types))], means, width, label=_short(label))
    ax.set_xticks([x + width * (len(groups) - 1) / 2 for x in range(len(types))], types)
    ax.set_title(f"{metric} per {type_key}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def outcomes_figure(groups: Mapping[str, Sequence[Episode]], flag: str | None) -> Any:
    """Stacked bars per run: solved, scored but not solved, and each unscored status."""
    plt = _pyplot()
    kinds: list[str] = ["solved", "failed"] if flag else ["scored"]
    counts: dict[str, dict[str, int]] = {}
    for label, eps in groups.items():
        row: dict[str, int] = {}
        for ep in eps:
            if is_scored(ep):
                value = ep.metrics.get(flag) if flag else None
                kind = "scored" if not flag else ("solved" if isinstance(value, int | float) and value >= 0.5
                                                  else "failed")
            else:
                kind = ep.status
                if kind not in kinds:
                    kinds.append(kind)
            row[kind] = row.get(kind, 0) + 1
        counts[label] = row
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(groups) + 2), 3.4))
    bottom = [0] * len(groups)
    for kind in kinds:
        heights = [counts[label].get(kind, 0) for label in groups]
        ax.bar(range(len(groups)), heights, bottom=bottom, label=kind)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.set_xticks(range(len(groups)), [_short(lb) for lb in groups], rotation=30, ha="right")
    ax.set_ylabel("episodes")
    ax.set_title("how episodes ended")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def cost_quality_figure(groups: Mapping[str, Sequence[Episode]], metric: str | None, flag: str | None) -> Any:
    """Quality (first headline metric) against tokens per episode, or wall seconds without a model."""
    plt = _pyplot()
    costs = {label: cost_summary(eps, solved_metric=flag)["per_episode"] for label, eps in groups.items()}
    tokens = any((c["input_tokens"] or 0) + (c["output_tokens"] or 0) > 0 for c in costs.values())
    fig, ax = plt.subplots(figsize=(4.6, 3.6))
    for label, eps in groups.items():
        c = costs[label]
        x = (c["input_tokens"] or 0) + (c["output_tokens"] or 0) if tokens else (c["wall_s"] or 0.0)
        iv = metric_intervals(eps).get(metric or "", {"mean": math.nan, "low": math.nan, "high": math.nan})
        y = iv["mean"]
        if y == y:
            ax.errorbar([x], [y], yerr=[[max(y - iv["low"], 0.0)], [max(iv["high"] - y, 0.0)]], fmt="o", capsize=3,
                        label=_short(label))
    ax.set_xlabel("tokens per episode" if tokens else "wall seconds per episode")
    ax.set_ylabel(metric or "—")
    ax.set_title("cost vs quality")
    if groups:
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def standard_figures(groups: Mapping[str, Sequence[Episode]], headline: Sequence[str],
                     task_type: str = "", units: Mapping[str, str] | None = None) -> FigureList:
    """The figures every suite gets, as (file stem, matplotlib figure); ``units`` are the suite's
    (they decide whether the first headline metric is a 0/1 flag, see `cost.solved_flag`)."""
    all_eps = [ep for eps in groups.values() for ep in eps]
    flag = solved_flag(headline, all_eps, units)
    first = headline[0] if headline else next(iter(sorted({k for ep in all_eps for k in ep.metrics})), None)
    out: FigureList = [("metrics", metrics_figure(groups, headline)), ("outcomes", outcomes_figure(groups, flag)),
                       ("cost_quality", cost_quality_figure(groups, first, flag))]
    if task_type and first:
        out.insert(1, ("task_types", task_type_figure(groups, first, task_type)))
    return out


def write_figures(groups: Mapping[str, Sequence[Episode]], out_dir: str | Path, *, headline: Sequence[str],
                  task_type: str = "", suite_figures: Callable[[Mapping[str, Sequence[Episode]]], FigureList]
                  | None = None, units: Mapping[str, str] | None = None) -> list[Path]:
    """Write the standard figures and the suite's own, each as PNG and SVG; return the paths."""
    plt = _pyplot()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = standard_figures(groups, headline, task_type, units)
    if suite_figures is not None:
        figures += suite_figures(groups)
    written: list[Path] = []
    for stem, fig in figures:
        for ext in ("png", "svg"):
            path = out / f"{stem}.{ext}"
            fig.savefig(path, format=ext, metadata={"Date": None} if ext == "svg" else {"Software": None})
            written.append(path)
        plt.close(fig)
    return written
