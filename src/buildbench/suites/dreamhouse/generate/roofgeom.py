"""Roof geometry of one section in its own (u, v) frame, shared by walls and roofs.

``u`` runs along the ridge (0 … L), ``v`` across the span (0 … S) from the *near* eave
wall; heights are world z. Rafter undersides pass through the outer top corner of the
eave plates (the bird's-mouth seat), so the roof underside above the wall line ``v`` is
``z_e + v·t``. Gable-end walls take this profile for their gable studs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..check.config import ValidatorConfig
from ..model import libm
from .frame import D2X8, D2X10, D2X12, FLOOR_DEPTH, MODULE, STORY_H, T2X, WALL_H
from .params import RoofSpec, SectionSpec

#: Rafter sizes tried in order, and their depths.
RAFTER_SIZES: tuple[tuple[str, float], ...] = (("2x8", D2X8), ("2x10", D2X10), ("2x12", D2X12))
#: Keep designed spans this far under the validator's table value.
SPAN_MARGIN = 0.95
#: Rafter spacing column of the IRC table: 24 in o.c.
RAFTER_COLUMN = 1
#: Gambrel knee: horizontal inset of the slope break from each eave, fraction of the span.
KNEE_FRAC = 0.25
#: Eave overhang of A-frames (rafters land on the floor seat plates).
AFRAME_OVERHANG_M = 0.1
#: How far (m) above a rafter's bottom end zone its seat plate may start (T10 ε_c 0.10 m plus
#: the 76 mm doubled plate, less a margin).
_SEAT_REACH_M = 0.16
#: Shortest ridge of a hip roof on a near-square plan (one module).
MIN_HIP_RIDGE_M = MODULE


def eave_height(sec: SectionSpec) -> float:
    """World z of the rafter seat: top of the top story's top plates, or the floor seat plate."""
    deck = sec.z_base_m + FLOOR_DEPTH + (sec.stories - 1) * STORY_H
    return deck + (T2X if sec.roof.aframe else WALL_H)


def rafter_limit_m(nominal: str) -> float:
    """Allowable horizontal rafter span (validator's default IRC table, 24 in o.c.), with margin."""
    return ValidatorConfig().rafter_spans.span_m(nominal, RAFTER_COLUMN) * SPAN_MARGIN


def pick_rafter(plan_m: float) -> tuple[str, float, bool]:
    """Smallest rafter for a horizontal run; purlins (halving the span, paper T2) when needed.

    Returns:
        Nominal size, depth in metres, and whether purlins are required.
    """
    for purlins in (False, True):
        eff = plan_m / 2.0 if purlins else plan_m
        for nominal, depth in RAFTER_SIZES:
            if eff <= rafter_limit_m(nominal):
                return nominal, depth, purlins
    raise ValueError(f"no rafter size spans {plan_m:.2f} m even with purlins")


@dataclass(frozen=True)
class RoofGeom:
    """Derived dimensions of one section's roof (metres; slopes are rise/run)."""

    sec: SectionSpec
    spec: RoofSpec

    # -- frame ----------------------------------------------------------------------
    @cached_property
    def axis(self) -> str:
        """Ridge axis; hip ridges always follow the longer side."""
        if self.spec.kind == "hip":
            return "x" if self.sec.width_m >= self.sec.depth_m else "y"
        return self.spec.ridge_axis

    @property
    def flip(self) -> bool:
        """Shed roofs mirror ``v`` so the high wall is on the requested side."""
        return self.spec.kind == "shed" and self.spec.high_side < 0

    @property
    def L(self) -> float:  # noqa: N802 - the paper-style symbol reads best here
        """Length along the ridge."""
        return self.sec.width_m if self.axis == "x" else self.sec.depth_m

    @property
    def S(self) -> float:  # noqa: N802
        """Span across the ridge."""
        return self.sec.depth_m if self.axis == "x" else self.sec.width_m

    @cached_property
    def z_e(self) -> float:
        """Rafter seat height."""
        return eave_height(self.sec)

    @cached_property
    def overhang(self) -> float:
        """Horizontal eave overhang, capped so every rafter tail stays in reach of its seat.

        Paper T10 wants a connection in the bottom 20% of each rafter's height (± 0.10 m);
        the tail hangs ``overhang·t`` below the plate, so the cap is
        ``(0.2·run·t + 0.17) / (0.8·t)`` for a plane's shortest rafter run (0 for hip jacks).
        """
        if self.spec.aframe:
            return AFRAME_OVERHANG_M
        oh = self.spec.overhang_m
        for run, t in self._planes():
            oh = min(oh, (0.2 * run * t + _SEAT_REACH_M) / (0.8 * t))
        return oh

    def _planes(self) -> list[tuple[float, float]]:
        """(shortest run from the wall line, slope) of each rafter family with a tail."""
        kind, p = self.spec.kind, self.spec.pitch
        if kind == "shed":
            return [(self.S, p)]
        if kind == "gambrel":
            return [(self.v_k, self.spec.lower_pitch)]
        if kind == "hip":
            return [(0.0, max(p, self.S / 2.0 * p / self.hip_end))]
        return [(self.v_r, self.t_near), (self.S - self.v_r, self.t_far)]

    @cached_property
    def rake(self) -> float:
        """Gable-end overhang on fly rafters and lookouts (gable roofs only, 0 otherwise).

        Dropped when the tail lookout could not reach the fly rafter's bottom end zone
        (paper T10): it sits at the rafters' top plane, ``d/cos θ`` above their underside.
        """
        if self.spec.kind != "gable" or self.spec.aframe:
            return 0.0
        d, oh = self.rafter_depth, self.overhang
        for run, t in self._planes():
            h = (run + oh) * t + d / np.hypot(1.0, t)
            if 0.1 * t + d * np.hypot(1.0, t) - 0.038 > 0.2 * h + 0.08:
                return 0.0
        return self.spec.rake_m

    def sides(self) -> dict[str, str]:
        """World wall side of each roof edge: ``near``/``far`` eaves, ``start``/``end`` gables."""
        if self.axis == "x":
            near, far = ("back", "front") if self.flip else ("front", "back")
            return {"near": near, "far": far, "start": "left", "end": "right"}
        near, far = ("right", "left") if self.flip else ("left", "right")
        return {"near": near, "far": far, "start": "front", "end": "back"}

    def to_world(self, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World (x, y) of local (u, v)."""
        s = self.sec
        vv = (
            (s.y1_m if self.axis == "x" else s.x1_m) - v
            if self.flip
            else (s.y0_m if self.axis == "x" else s.x0_m) + v
        )
        if self.axis == "x":
            return s.x0_m + u, vv
        return vv, s.y0_m + u

    def v_of_world(self, coord: np.ndarray) -> np.ndarray:
        """Span coordinate ``v`` of a world coordinate along a gable wall."""
        s = self.sec
        lo, hi = (s.y0_m, s.y1_m) if self.axis == "x" else (s.x0_m, s.x1_m)
        return hi - coord if self.flip else coord - lo

    def yaw(self, phi: np.ndarray) -> np.ndarray:
        """World yaw of a local heading ``phi`` (radians from +u towards +v)."""
        # libm, not numpy's ufuncs, whose float64 kernels depend on the CPU (model.libm).
        return self.yaw_of(*libm.cos_sin(phi))

    def yaw_of(self, du: np.ndarray, dv: np.ndarray) -> np.ndarray:
        """:meth:`yaw` of the heading whose plan direction is ``(du, dv) = (cos phi, sin phi)``."""
        if self.flip:
            dv = -dv
        return libm.arctan2(dv, du) if self.axis == "x" else libm.arctan2(du, dv)

    # -- shape ----------------------------------------------------------------------
    @property
    def v_r(self) -> float:
        """Ridge position across the span (sheds: the high wall)."""
        if self.spec.kind == "shed":
            return self.S
        return self.S * (self.spec.ridge_frac if self.spec.kind == "gable" else 0.5)

    @property
    def rise(self) -> float:
        """Height of the ridge line above the seat (gable/hip/shed)."""
        if self.spec.kind == "shed":
            return self.S * self.spec.pitch
        if self.spec.kind == "gambrel":
            return self.z_ridge_underside - self.z_e
        return self.S / 2.0 * self.spec.pitch

    @property
    def t_near(self) -> float:
        """Slope of the near plane (gambrel: the upper plane)."""
        return self.spec.pitch if self.spec.kind in ("shed", "gambrel") else self.rise / self.v_r

    @property
    def t_far(self) -> float:
        """Slope of the far plane."""
        return self.spec.pitch if self.spec.kind == "gambrel" else self.rise / (self.S - self.v_r)

    @property
    def v_k(self) -> float:
        """Gambrel knee inset from each eave."""
        return KNEE_FRAC * self.S

    @cached_property
    def z_knee(self) -> float:
        """Gambrel: top of the knee purlin, level with the top corner of the lower rafters' heads
        (so the purlin meets their top end zone); the upper rafters start on it."""
        t = self.spec.lower_pitch
        return self.z_e + self.v_k * t + self.lower_depth / np.hypot(1.0, t)

    @property
    def z_ridge_underside(self) -> float:
        """Gambrel: underside of the upper rafters at mid-span."""
        return self.z_knee + (self.S / 2.0 - self.v_k) * self.spec.pitch

    @cached_property
    def hip_end(self) -> float:
        """Hip: horizontal run of the end planes (ridge stops this far from each end)."""
        return min(self.S / 2.0, max((self.L - MIN_HIP_RIDGE_M) / 2.0, MODULE / 2.0))

    @cached_property
    def _sizing(self) -> tuple[str, float, bool]:
        oh, kind = self.overhang, self.spec.kind
        if kind == "shed":
            return pick_rafter(self.S + 2 * oh)
        if kind == "gambrel":
            return pick_rafter(max(self.v_k + oh, self.S / 2.0 - self.v_k))
        run = max(self.v_r, self.S - self.v_r) + oh
        if kind == "hip":
            run = max(run, float(np.hypot(self.hip_end, self.S / 2.0)) + oh * np.sqrt(2.0))
        return pick_rafter(run)

    @property
    def rafter_depth(self) -> float:
        """Rafter depth (gambrel: upper rafters)."""
        return self._sizing[1]

    @property
    def lower_depth(self) -> float:
        """Gambrel lower rafter depth."""
        return self._sizing[1]

    @property
    def purlins(self) -> bool:
        """Whether mid-span purlins are needed (gambrels always have knee purlins)."""
        return self._sizing[2] or self.spec.kind == "gambrel"

    def profile(self, v: np.ndarray) -> np.ndarray:
        """Roof underside height above span position ``v`` (gable, gambrel, shed ends)."""
        v = np.asarray(v, dtype=np.float64)
        kind, z = self.spec.kind, self.z_e
        if kind == "shed":
            return z + v * self.spec.pitch
        if kind == "gambrel":
            w = np.minimum(v, self.S - v)
            low = z + w * self.spec.lower_pitch
            up = self.z_knee + (w - self.v_k) * self.spec.pitch
            return np.where(w <= self.v_k, low, up)
        return np.where(v <= self.v_r, z + v * self.t_near, z + (self.S - v) * self.t_far)

    @property
    def knee_plate_top(self) -> float:
        """Shed: top of the plate the rafters bear on over the high wall."""
        return self.z_e + (self.S - 0.089) * self.spec.pitch


@dataclass(frozen=True)
class WallProfile:
    """Roof underside above a gable-end wall, by world coordinate along the wall (picklable)."""

    geom: RoofGeom

    def __call__(self, s: np.ndarray) -> np.ndarray:
        """Underside heights at wall positions ``s``."""
        return self.geom.profile(self.geom.v_of_world(s))
