"""Which conclusions of a run depend on our physics constants (``buildbench buildarena sensitivity``).

Besiege publishes none of its joint strengths, drag or motor torques, so several constants of
our physics profile are assumptions. This re-simulates every final machine of one or more runs
under the run's profile (the *baseline*) and under perturbed copies of it, one change at a time
(``--vary weld_strength=0.5x,2x`` is two settings: strength halved, strength doubled; a bare
number sets the value instead of scaling it), and reports per task:

* **flips**: episodes whose verdict differs from the baseline's (to fail, to pass), among
  those scored under both; a run that diverged under every step is counted (``diverged``) and
  is unscored unless the blame rule of ``check.simulate`` holds the machine responsible; a run
  MuJoCo's limits or errors stopped (its arena full, out of memory, a model it could not build,
  another MuJoCo error: ``divergence.NO_RETRY``) is counted apart (``sim_limits``), as the run
  report's ``sim limit`` columns have it: a limit is the machine's failure, an error unscored
  unless the blame rule holds;
* **success rate** and **mean indicator** under each setting;
* **Kendall τ of the configurations** (each run directory's agent and model): how the ranking
  of configurations by success rate, and by mean indicator, under a setting agrees with the
  baseline's ranking (``scipy.stats.kendalltau``, τ-b; ``None`` with fewer than two
  configurations or when a ranking is all ties);
* **Kendall τ of the machines**: the same over the task's episodes' indicators, which is
  defined for a single run.

Over all tasks together only success rates are compared (indicators of different tasks are
different quantities).

The baseline is re-simulated, not read from the store, so every setting runs the same code;
episodes whose re-simulated baseline verdict differs from the stored one are counted
(``baseline_differs_from_stored``: the code or the profile changed since the run).
An episode without an approved machine fails under every setting (as ``score_episode``
scores it); an unscored episode (an infrastructure error) is left out and counted.
"""

from __future__ import annotations

import math
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from buildbench.jsonio import finite_float

from .outcome import BuildArenaOutcome
from .physics import PhysicsConfig
from .physics.divergence import NO_RETRY
from .physics.profile import DEFAULT_PROFILE, PhysicsProfile, ProfileError, load_profile


class SensitivityError(ValueError):
    """Bad input to the report (a ``--vary``, a run directory): one line saying what and where."""


@dataclass(frozen=True)
class Setting:
    """One physics setting: a label and the overrides that make it from the baseline profile."""

    label: str
    overrides: dict[str, float | str] = field(default_factory=dict)


BASELINE = Setting("baseline")


def _change(name: str, text: str) -> float | str:
    item = text.strip()
    if not item:
        raise SensitivityError(f"--vary {name}: an empty value (write factors such as 0.5x,2x or numbers)")
    if item.lower().endswith("x"):
        try:
            factor = float(item[:-1])
        except ValueError:
            factor = math.nan
        if not (math.isfinite(factor) and factor >= 0):
            raise SensitivityError(f"--vary {name}: {item!r} is not a factor such as 0.5x or 2x (finite, ≥ 0)")
        return f"{factor:g}x"
    try:
        return finite_float(item)
    except ValueError as exc:
        raise SensitivityError(f"--vary {name}: {item!r} {exc} (write factors such as 0.5x,2x or "
                               "finite numbers)") from None


def parse_vary(texts: Sequence[str], profile: PhysicsProfile) -> list[Setting]:
    """The settings of ``--vary NAME=V1,V2…`` options, each checked against ``profile``.

    Raises:
        SensitivityError: Not ``NAME=VALUES``, an unknown name, a bad factor or number, or a
            value the simulation refuses (each named).
    """
    settings: list[Setting] = []
    for text in texts:
        name, sep, values = text.partition("=")
        name = name.strip()
        if not sep or not name:
            raise SensitivityError(f"--vary {text!r}: expected NAME=VALUES such as weld_strength=0.5x,2x")
        for item in values.split(","):
            change = _change(name, item)
            label = f"{name}={change if isinstance(change, str) else f'{change:g}'}"
            if any(s.label == label for s in settings):
                continue
            # Zero is zero in any unit, so it is a factor too: "drag=0" works on a group of mixed units.
            setting = Setting(label, {name: "0x" if change == 0 else change})
            config_of(profile, setting)
            settings.append(setting)
    if not settings:
        raise SensitivityError("give at least one --vary NAME=VALUES")
    return settings


def config_of(profile: PhysicsProfile, setting: Setting) -> PhysicsConfig:
    """The simulation settings of ``profile`` changed by ``setting``.

    Raises:
        SensitivityError: An unknown constant or a value the simulation refuses.
    """
    try:
        return PhysicsConfig.from_profile(profile.with_overrides(setting.overrides))
    except ProfileError as exc:
        raise SensitivityError(f"--vary {setting.label}: {exc}") from None


@dataclass(frozen=True)
class EpisodeRef:
    """One stored episode to re-simulate."""

    configuration: str
    task_id: str
    sample: int
    seed: int
    #: None: a scored episode that stored no outcome (the agent's output was refused before the
    #: env gave one), a failure under every setting.
    outcome: BuildArenaOutcome | None
    stored_passed: bool | None = None


@dataclass
class RunEpisodes:
    """The episodes of the run directories, and what was left out."""

    episodes: list[EpisodeRef]
    configurations: list[str]
    physics: str | None
    unscored: int = 0


def _label(config: dict[str, Any]) -> str:
    agent = str(config.get("agent", "?"))
    model = config.get("model")
    return f"{agent}:{model}" if model else agent


def read_runs(run_dirs: Sequence[Path]) -> RunEpisodes:
    """Every BuildArena episode of ``run_dirs``, labelled with its configuration.

    Two directories of the same agent and model are one configuration (more samples) when
    their options agree, else each gets its directory name appended.

    Raises:
        SensitivityError: A directory that is not a run, not a BuildArena run, or runs that
            were made under different physics profiles.
    """
    from buildbench.harness.episode import is_scored
    from buildbench.harness.episode_outcome import episode_outcome
    from buildbench.harness.errors import BuildbenchError
    from buildbench.harness.store import Store

    episodes: list[EpisodeRef] = []
    labels: dict[str, dict[str, Any]] = {}
    physics: set[str | None] = set()
    unscored = 0
    for run_dir in run_dirs:
        try:
            store = Store(run_dir, create=False)
        except BuildbenchError as exc:
            raise SensitivityError(str(exc)) from None
        with store:
            config = dict(store.manifest().get("config") or {})
            if config.get("suite") != "buildarena":
                raise SensitivityError(f"{run_dir} is a run of suite {config.get('suite', 'unknown')!r}, not of buildarena")
            options = dict(config.get("options") or {})
            physics.add(options.pop("physics", None))
            label = _label(config)
            if label in labels and labels[label] != options:
                label = f"{label} ({run_dir.name})"
            labels.setdefault(label, options)
            for episode in store.episodes():
                if not is_scored(episode):
                    unscored += 1
                    continue
                try:
                    outcome = episode_outcome(episode, BuildArenaOutcome)
                except BuildbenchError as exc:
                    raise SensitivityError(f"{run_dir}: {exc}") from None
                stored = episode.metrics.get("passed")
                episodes.append(EpisodeRef(label, episode.task_id, episode.sample, episode.seed, outcome,
                                           None if stored is None else bool(stored)))
    if len(physics) > 1:
        names = ", ".join(sorted(str(p or DEFAULT_PROFILE) for p in physics))
        raise SensitivityError(f"the runs used different physics profiles ({names}); compare runs of one profile")
    return RunEpisodes(episodes, list(labels), next(iter(physics)), unscored)


@dataclass(frozen=True)
class _Job:
    episode: EpisodeRef
    setting: str
    config: PhysicsConfig


def _resimulate(job: _Job) -> dict[str, Any]:
    """One episode's final machine under one setting (a process-pool task)."""
    from .check import simulate
    from .outcome import rebuild_outcome

    typed = job.episode.outcome
    out: dict[str, Any] = {"passed": False, "indicator": 0.0, "diverged": False, "sim_limit": False, "scored": True}
    if typed is None:
        return out
    machine = rebuild_outcome(typed)
    if machine is None or not typed.approved:
        return out
    try:
        result = simulate(machine, job.episode.task_id, seed=int(typed.seed or 0), duration_s=typed.sim_duration_s,
                          config=job.config)
    except ValueError:  # no solid block: fails the task, as score_episode has it
        return out
    # A run that diverged under every step, or that MuJoCo stopped, is the machine's failure only
    # where ``check.simulate`` says so (a limit, or the blame rule); otherwise it is unscored.
    ended = result.metrics.get("status") == "diverged"
    stopped = ended and result.metrics.get("diverged_reason") in NO_RETRY
    indicator = float(result.indicator)
    out.update(passed=bool(result.passed), indicator=indicator if math.isfinite(indicator) else 0.0,
               diverged=ended and not stopped, sim_limit=stopped,
               scored=not ended or bool(result.metrics.get("machine_caused")))
    return out


def _tau(a: Sequence[float], b: Sequence[float]) -> float | None:
    from scipy.stats import kendalltau

    if len(a) < 2:
        return None
    tau = kendalltau(a, b).statistic
    return float(tau) if tau == tau else None


def _summarise(task_eps: list[int], configurations: list[str], refs: list[EpisodeRef],
               results: dict[str, list[dict[str, Any]]], settings: list[Setting]) -> dict[str, Any]:
    base = [results[BASELINE.label][k] for k in task_eps]
    per_config = {c: [i for i, k in enumerate(task_eps) if refs[k].configuration == c] for c in configurations}
    present = [c for c in configurations if per_config[c]]

    def config_scores(rows: list[dict[str, Any]]) -> tuple[list[float], list[float]]:
        rates = [float(np.mean([rows[i]["passed"] for i in per_config[c]])) for c in present]
        means = [float(np.mean([rows[i]["indicator"] for i in per_config[c]])) for c in present]
        return rates, means

    base_rates, base_means = config_scores(base)
    # The baseline re-simulated should give the verdicts the run stored; where it does not, the code
    # or the profile changed since the run, and every other comparison is against the new baseline.
    stored = [(refs[k].stored_passed, b) for k, b in zip(task_eps, base, strict=True) if refs[k].stored_passed is not None]
    out: dict[str, Any] = {"episodes": len(task_eps), "configurations": present,
                           "baseline_differs_from_stored": sum(1 for p, b in stored if b["scored"] and p != b["passed"]),
                           "settings": {}}
    for setting in settings:
        rows = [results[setting.label][k] for k in task_eps]
        rates, means = config_scores(rows)
        both = [(b, r) for b, r in zip(base, rows, strict=True) if b["scored"] and r["scored"]]
        to_fail = sum(1 for b, r in both if b["passed"] and not r["passed"])
        to_pass = sum(1 for b, r in both if r["passed"] and not b["passed"])
        out["settings"][setting.label] = {
            "success_rate": float(np.mean([r["passed"] for r in rows])),
            "mean_indicator": float(np.mean([r["indicator"] for r in rows])),
            "flips": to_fail + to_pass, "to_fail": to_fail, "to_pass": to_pass,
            "diverged": sum(1 for r in rows if r["diverged"]),
            "sim_limits": sum(1 for r in rows if r["sim_limit"]),
            "unscored": sum(1 for r in rows if not r["scored"]),
            "by_configuration": {c: {"success_rate": s, "mean_indicator": m}
                                 for c, s, m in zip(present, rates, means, strict=True)},
            "tau_configurations_success": None if setting is BASELINE else _tau(base_rates, rates),
            "tau_configurations_indicator": None if setting is BASELINE else _tau(base_means, means),
            "tau_machines": None if setting is BASELINE else _tau([b["indicator"] for b in base],
                                                                 [r["indicator"] for r in rows]),
        }
    return out


def sensitivity_report(run_dirs: Sequence[Path], vary: Sequence[str], *, physics: str | None = None,
                       workers: int = 2) -> dict[str, Any]:
    """Re-simulate the runs' final machines under the baseline and each ``--vary`` setting.

    Args:
        run_dirs: Run directories (one configuration each, or several of the same).
        vary: ``NAME=V1,V2…`` texts (see :func:`parse_vary`).
        physics: Baseline profile name or file (default: the one the runs used).
        workers: Processes (1: in this process).

    Raises:
        SensitivityError: Bad input (see :func:`parse_vary`, :func:`read_runs`), or an unknown profile.
    """
    from buildbench.parallel import map_ordered

    runs = read_runs(run_dirs)
    try:
        profile = load_profile(physics or runs.physics or DEFAULT_PROFILE)
    except ProfileError as exc:
        raise SensitivityError(str(exc)) from None
    settings = [BASELINE, *parse_vary(vary, profile)]
    configs = {s.label: config_of(profile, s) for s in settings}
    jobs = [_Job(ep, s.label, configs[s.label]) for s in settings for ep in runs.episodes]
    wall0 = time.perf_counter()
    outputs = list(map_ordered(_resimulate, jobs, workers=workers))
    wall = time.perf_counter() - wall0
    n = len(runs.episodes)
    results = {s.label: outputs[k * n:(k + 1) * n] for k, s in enumerate(settings)}
    tasks: dict[str, list[int]] = {}
    for k, ep in enumerate(runs.episodes):
        tasks.setdefault(ep.task_id, []).append(k)
    per_task = {t: _summarise(ks, runs.configurations, runs.episodes, results, settings)
                for t, ks in sorted(tasks.items(), key=lambda kv: _task_order(kv[0]))}
    overall = _summarise(list(range(n)), runs.configurations, runs.episodes, results, settings) if n else {}
    for block in overall.get("settings", {}).values():
        # Indicators of different tasks are different quantities (units, loads, heights): no ranking.
        block["mean_indicator"] = None
        block["tau_configurations_indicator"] = block["tau_machines"] = None
    return {
        "physics": {"name": profile.name, "sha256": profile.sha256},
        "settings": [{"label": s.label, "overrides": s.overrides, "sha256": configs[s.label].sha256}
                     for s in settings],
        "configurations": runs.configurations,
        "episodes": n,
        "unscored_left_out": runs.unscored,
        "simulations": len(jobs),
        "wall_s": wall,
        "workers": workers,
        "tasks": per_task,
        "overall": overall,
    }


def _task_order(task_id: str) -> tuple[int, str]:
    order = ("transport", "support", "lift")
    head = task_id.split("-", 1)[0]
    return (order.index(head) if head in order else len(order), task_id)


def _fmt_tau(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f}"


def format_report(report: dict[str, Any]) -> str:
    """The report as a text table: one row per task and setting."""
    lines = [f"physics: {report['physics']['name']} ({report['physics']['sha256'][:12]}); "
             f"{report['episodes']} episodes of {len(report['configurations'])} configuration(s) "
             f"({', '.join(report['configurations'])}); {report['simulations']} simulations in "
             f"{report['wall_s']:.1f} s on {report['workers']} worker(s)"]
    differs = report["overall"].get("baseline_differs_from_stored", 0) if report["overall"] else 0
    if differs:
        lines.append(f"note: the re-simulated baseline differs from the verdict the run stored in {differs} "
                     "episode(s): the code or the profile changed since the run")
    if report["unscored_left_out"]:
        lines.append(f"left out: {report['unscored_left_out']} unscored episode(s) (infrastructure errors)")
    rows = [*report["tasks"].items(), *([("all tasks", report["overall"])] if report["overall"] else [])]
    # columns as wide as their longest entry: fixed widths made every row 132 columns in a log
    tw = max([4, *(len(task) for task, _ in rows)])
    sw = max([7, *(len(label) for _, block in rows for label in block["settings"])])
    header = f"{'task':<{tw}} {'setting':<{sw}} {'SR':>5} {'indicator':>9} {'flips':>5} {'→fail':>5} {'→pass':>5} " \
             f"{'div':>3} {'lim':>3} {'τ cfg SR':>9} {'τ cfg ind':>9} {'τ mach':>7}"
    table = [header, "-" * len(header)]
    for task, block in rows:
        for label, s in block["settings"].items():
            indicator = "—" if s["mean_indicator"] is None else f"{s['mean_indicator']:.1f}"
            table.append(f"{task:<{tw}} {label:<{sw}} {s['success_rate']:>5.0%} {indicator:>9} "
                         f"{s['flips']:>5} {s['to_fail']:>5} {s['to_pass']:>5} {s['diverged']:>3} {s['sim_limits']:>3} "
                         f"{_fmt_tau(s['tau_configurations_success']):>9} "
                         f"{_fmt_tau(s['tau_configurations_indicator']):>9} {_fmt_tau(s['tau_machines']):>7}")
    notes = _conclusions(report)
    notes.append("SR: success rate; flips: verdicts that differ from the baseline's (both scored); div: runs that "
                 "diverged under every step (unscored unless the machine caused it); lim: runs MuJoCo's limits or "
                 "errors stopped (its arena full, out of memory, a model it could not build: the machine's "
                 "failure; another MuJoCo error: unscored unless the machine caused it); "
                 "τ: Kendall τ-b against the baseline (cfg: ranking of configurations; mach: of the machines "
                 "by indicator; — where undefined).")
    prose = [textwrap.fill(line, 100, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
             for line in lines + notes]
    return "\n".join(prose[:len(lines)] + table + prose[len(lines):])


def _conclusions(report: dict[str, Any]) -> list[str]:
    """One line per setting: where verdicts flipped and where a ranking changed."""
    if not report["tasks"]:
        return []
    labels = [s["label"] for s in report["settings"][1:]]
    out = []
    for label in labels:
        flipped = [f"{t} ({b['settings'][label]['flips']})" for t, b in report["tasks"].items()
                   if b["settings"][label]["flips"]]
        reranked = [t for t, b in report["tasks"].items()
                    if any(v is not None and v < 1.0 for v in (b["settings"][label]["tau_configurations_success"],
                                                               b["settings"][label]["tau_configurations_indicator"]))]
        total = report["overall"]["settings"][label]["flips"]
        out.append(f"{label}: {total} of {report['episodes']} verdicts flip"
                   + (f" ({', '.join(flipped)})" if flipped else "")
                   + (f"; configurations ranked differently on {', '.join(reranked)}" if reranked else
                      "; no ranking of configurations changes where one is defined"))
    return out
