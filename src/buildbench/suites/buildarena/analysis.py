"""Trajectory metrics of the released analysers (reported beside the pass rules, not used by them).

Against an ideal straight line from ``start`` to ``target`` (real frame,
units), over the samples after ``after_s`` seconds:

* **max progress ratio**: the furthest along-line position reached, over the
  line's length D, clipped to [0, 1];
* **direction consistency**: the time-weighted mean of max(0, cos θ), θ the
  angle between the velocity and the line (1 = always heading along it);
* **backtrack penalty**: distance travelled backwards along the line, over D;
* **lateral deviation**: the time integral of the distance from the line,
  over D·T (sample-and-hold: each interval takes its first sample's value);
* **path efficiency**: path length over the furthest progress, minus 1
  (0 = straight; large when little progress was made);
* **final distance ratio**: what is left of the line at the last sample, over D.

Transport follows the cargo (else the starting block) towards the goal point,
(10, 10, 0) for the nine levels and (d, d, 0) for a variant whose goal is d;
Lift follows the mean position of the tracked blocks towards (0, 0, 1700),
far above any pass height, for the nine levels and every variant alike.
**Max speed** is the largest finite-difference 3-D speed of any logged block
after 2 s. Intervals with no time step are skipped; fewer than two samples or
a zero-length line give the neutral values (0, and 1 for the final ratio).
"""

from __future__ import annotations

import numpy as np

from .physics import Trajectory

TRANSPORT_TARGET = (10.0, 10.0, 0.0)
LIFT_TARGET = (0.0, 0.0, 1700.0)
METRICS_AFTER_S = 2.0
_TINY = 1e-8

NEUTRAL = {"max_progress_ratio": 0.0, "direction_consistency": 0.0, "backtrack_penalty": 0.0,
           "lateral_deviation": 0.0, "path_efficiency": 0.0, "final_distance_ratio": 1.0}


def path_quality(time_s: np.ndarray, points: np.ndarray, start: tuple[float, float, float],
                 target: tuple[float, float, float]) -> dict[str, float]:
    """The six line-following metrics of ``points`` (shape (T, 3)) sampled at ``time_s``."""
    origin, goal = np.asarray(start, dtype=float), np.asarray(target, dtype=float)
    length = float(np.linalg.norm(goal - origin))
    if length < 1e-6 or len(points) < 2:
        return dict(NEUTRAL)
    axis = (goal - origin) / length
    step_s = np.diff(time_s)
    moving = step_s > 0.0
    if not moving.any():
        return dict(NEUTRAL)
    duration = float(time_s[-1] - time_s[0]) if time_s[-1] > time_s[0] else float(step_s[moving].sum())
    step_s = step_s[moving]
    steps = np.diff(points, axis=0)[moving]
    velocity = steps / step_s[:, None]
    along_velocity = velocity @ axis
    offsets = points - origin
    along = offsets @ axis
    heading = np.maximum(0.0, along_velocity / np.maximum(np.linalg.norm(velocity, axis=1), _TINY))
    lateral = np.linalg.norm(offsets - np.outer(along, axis), axis=1)
    furthest = float(along.max())
    return {
        "max_progress_ratio": min(1.0, max(0.0, furthest / (length + _TINY))),
        "direction_consistency": float(np.sum(heading * step_s) / duration),
        "backtrack_penalty": float(np.sum(np.maximum(0.0, -along_velocity) * step_s) / (length + _TINY)),
        "lateral_deviation": float(np.sum(lateral[:-1][moving] * step_s) / ((length + _TINY) * duration)),
        "path_efficiency": max(0.0, float(np.linalg.norm(steps, axis=1).sum()) / max(furthest, _TINY) - 1.0),
        "final_distance_ratio": max(0.0, (length - float(along[-1])) / (length + _TINY)),
    }


def max_speed(traj: Trajectory, ids: list[str] | None = None, after_s: float = METRICS_AFTER_S) -> float:
    """Largest 3-D speed (units/s) of any of ``ids`` (default: every logged block) after ``after_s``."""
    late = traj.time > after_s
    if late.sum() < 2:
        return 0.0
    t = traj.time[late]
    dt = np.diff(t)
    ok = dt > 0
    best = 0.0
    for block in ids if ids is not None else traj.ids:
        path = traj.series(block)[late]
        speed = np.linalg.norm(np.diff(path, axis=0)[ok], axis=1) / dt[ok]
        if speed.size and np.isfinite(speed.max()):
            best = max(best, float(speed.max()))
    return best


def transport_metrics(traj: Trajectory, target_id: str,
                      goal: tuple[float, float, float] = TRANSPORT_TARGET) -> dict[str, float]:
    """Line-following metrics of the transported block towards ``goal`` plus the fleet's max speed."""
    late = traj.time > METRICS_AFTER_S
    quality = path_quality(traj.time[late], traj.series(target_id)[late], (0.0, 0.0, 0.0), goal)
    return {**quality, "max_speed": max_speed(traj)}


def lift_metrics(traj: Trajectory, tracked: list[str]) -> dict[str, float]:
    """Line-following metrics of the tracked blocks' mean position plus their max speed."""
    late = traj.time > METRICS_AFTER_S
    mean_path = np.mean(np.stack([traj.series(i)[late] for i in tracked], axis=1), axis=1)
    quality = path_quality(traj.time[late], mean_path, (0.0, 0.0, 0.0), LIFT_TARGET)
    return {**quality, "max_speed": max_speed(traj, tracked)}
