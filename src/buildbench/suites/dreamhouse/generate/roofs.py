"""Roof framing: ridge, common/jack/hip rafters at 24 in o.c., collar ties, purlins,
gambrel knee purlins, and gable-end overhangs (fly rafters on lookouts).

Everything is laid out in the section's roof frame (:class:`RoofGeom`: ``u`` along the
ridge, ``v`` across the span) and mapped to world coordinates at emission. A sloped
member is described by the start of its underside line, a plan heading, a horizontal run
and a slope; its box centre sits half a depth above that line.
"""

from __future__ import annotations

import numpy as np

from ..model import libm
from .frame import D2X4, D2X6, D2X8, D2X12, OC24, POST4, ROOF, T2X, FrameBuilder, Num, rows
from .roofgeom import RoofGeom
from .runs import Run, split_run

#: Collar ties sit this fraction of the rise above the seat (upper third).
COLLAR_FRAC = 0.6
#: Lookout spacing up the rake.
LOOKOUT_STEP_M = 0.8


def ridge_top(underside: float, depth: float, t: float) -> float:
    """Top of a 2x12 ridge board against rafter heads whose underside ends at ``underside``.

    Flush with the rafters' top plane where the ridge is deep enough; on steep roofs the
    plumb cut outgrows a 2x12, so the board is lowered until it still overlaps the rafter
    heads' top corners (their end zone, paper T10).
    """
    return underside + min(depth * np.hypot(1.0, t), depth / np.hypot(1.0, t) + 0.8 * D2X12)


class RoofWriter:
    """Emits the members of one roof into a :class:`FrameBuilder`."""

    def __init__(self, fb: FrameBuilder, g: RoofGeom, story: int, plates: dict[str, Run]) -> None:
        self.fb, self.g, self.story, self.plates = fb, g, story, plates

    # -- emission helpers ---------------------------------------------------------------
    def sloped(
        self, prefix: str, tag: str, u0: Num, v0: Num, z0: Num, phi: Num, run: Num, t: Num, depth: float,
        parents: Num,
    ) -> np.ndarray:  # fmt: skip
        """Members whose underside starts at ``(u0, v0, z0)`` and rises at slope ``t`` along heading ``phi``."""
        args = (u0, v0, z0, phi, run, t, parents)
        k = rows(*args)
        cols = np.empty((7, k))
        for r, a in enumerate(args):
            cols[r] = a
        u0, v0, z0, phi, run, t, parents = cols
        if k == 0:
            return np.zeros(0, dtype=np.int64)
        # Trigonometry through libm: numpy's float64 kernels depend on the CPU (model.libm).
        theta = libm.arctan(t)
        du, dv = libm.cos_sin(phi)
        ct, st = libm.cos_sin(theta)
        mid = run / 2.0
        cu = u0 + du * mid - st * du * depth / 2.0
        cv = v0 + dv * mid - st * dv * depth / 2.0
        cz = z0 + mid * t + ct * depth / 2.0
        x, y = self.g.to_world(cu, cv)
        sizes = np.empty((k, 3))
        sizes[:, 0], sizes[:, 1], sizes[:, 2] = run * np.hypot(1.0, t), T2X, depth
        centers = np.empty((k, 3))
        centers[:, 0], centers[:, 1], centers[:, 2] = x, y, cz
        return self.fb.add(
            prefix, tag, centers, sizes, phase=ROOF, section=self.g.sec.name,
            story=self.story, parents=parents.astype(np.int64), yaw=self.g.yaw_of(du, dv), pitch=theta,
        )  # fmt: skip

    def flat(
        self, prefix: str, tag: str, u_lo: Num, u_hi: Num, v_lo: Num, v_hi: Num, z_lo: Num, z_hi: Num,
        parents: Num,
    ) -> np.ndarray:  # fmt: skip
        """Axis-aligned members given by local (u, v) extents and world z."""
        args = (u_lo, u_hi, v_lo, v_hi, z_lo, z_hi)
        k = rows(*args)
        cols = np.empty((6, k))
        for r, a in enumerate(args):
            cols[r] = a
        u_lo, u_hi, v_lo, v_hi, z_lo, z_hi = cols
        if k == 0:
            return np.zeros(0, dtype=np.int64)
        xa, ya = self.g.to_world(u_lo, v_lo)
        xb, yb = self.g.to_world(u_hi, v_hi)
        lo, hi = np.empty((k, 3)), np.empty((k, 3))
        lo[:, 0], lo[:, 1], lo[:, 2] = np.minimum(xa, xb), np.minimum(ya, yb), z_lo
        hi[:, 0], hi[:, 1], hi[:, 2] = np.maximum(xa, xb), np.maximum(ya, yb), z_hi
        return self.fb.add_aabb(
            prefix, tag, lo, hi, phase=ROOF, section=self.g.sec.name, story=self.story, parents=parents
        )

    def along(
        self,
        prefix: str,
        tag: str,
        u_a: float,
        u_b: float,
        v_lo: float,
        v_hi: float,
        z_lo: float,
        z_hi: float,
        parent: int,
    ) -> np.ndarray:
        """A run along the ridge direction, cut into stock lengths."""
        st, en = split_run(u_a, u_b)
        return self.flat(prefix, tag, st, en, v_lo, v_hi, z_lo, z_hi, parent)

    def seat(self, edge: str, u: np.ndarray) -> np.ndarray:
        """Support edges: the plate piece under each rafter foot on eave ``edge``."""
        run = self.plates.get(self.g.sides()[edge])
        if run is None:
            return np.full(len(u), -1)
        coord = u + (self.g.sec.x0_m if self.g.axis == "x" else self.g.sec.y0_m)
        return run.covering(coord)

    def seat_v(self, edge: str, v: np.ndarray) -> np.ndarray:
        """Support edges for end-plane rafters bearing on gable-end wall ``edge`` at span positions ``v``."""
        run = self.plates.get(self.g.sides()[edge])
        if run is None:
            return np.full(len(v), -1)
        s = self.g.sec
        lo, hi = (s.y0_m, s.y1_m) if self.g.axis == "x" else (s.x0_m, s.x1_m)
        return run.covering(hi - v if self.g.flip else lo + v)

    # -- layouts ------------------------------------------------------------------------
    def rafter_u(self) -> np.ndarray:
        """Rafter positions along the ridge: over each gable wall and 24 in o.c. between."""
        L = self.g.L
        k = np.arange(1, int(np.floor(L / OC24)) + 1)
        inner = OC24 * k
        inner = inner[inner < L - OC24 / 2]
        return np.concatenate([[D2X4 / 2], inner, [L - D2X4 / 2]])

    def build(self) -> None:
        """Frame the roof of the section."""
        kind = self.g.spec.kind
        if kind == "hip":
            self._hip()
        elif kind == "gambrel":
            self._gambrel()
        elif kind == "shed":
            self._shed()
        else:
            self._gable()

    # -- gable --------------------------------------------------------------------------
    def _pair(
        self,
        tag: str,
        u: np.ndarray,
        head_near: float,
        head_far: float,
        t_n: float,
        t_f: float,
        z_n: float,
        z_f: float,
        v_n: float,
        v_f: float,
        depth: float,
        parents_n: Num,
        parents_f: Num,
    ) -> np.ndarray:
        """Rafters on both planes: near ones rise +v from ``v_n``, far ones rise -v from ``v_f``."""
        near = self.sloped(
            "Rafter", tag + "n", u, v_n, z_n, np.pi / 2, head_near - v_n, t_n, depth, parents_n
        )
        self.sloped("Rafter", tag + "f", u, v_f, z_f, -np.pi / 2, v_f - head_far, t_f, depth, parents_f)
        return near

    def _gable(self) -> None:
        g, oh, d = self.g, self.g.overhang, self.g.rafter_depth
        u = self.rafter_u()
        rake = g.rake
        v_r, t_n, t_f = g.v_r, g.t_near, g.t_far
        z_n, z_f = g.z_e - oh * t_n, g.z_e - oh * t_f
        near = self._pair(
            "",
            u,
            v_r - T2X / 2,
            v_r + T2X / 2,
            t_n,
            t_f,
            z_n,
            z_f,
            -oh,
            g.S + oh,
            d,
            self.seat("near", u),
            self.seat("far", u),
        )
        self._ridge(
            v_r,
            max(
                ridge_top(g.z_e + (v_r - T2X / 2) * t_n, d, t_n),
                ridge_top(g.z_e + (g.S - v_r - T2X / 2) * t_f, d, t_f),
            ),
            -rake,
            g.L + rake,
            near[0],
        )
        rise = g.rise
        if rise >= 1.2:
            zc = g.z_e + COLLAR_FRAC * rise
            uc = u[2:-2:2]
            va, vb = (zc - g.z_e) / t_n, g.S - (zc - g.z_e) / t_f
            self.flat("Collar", "", uc + T2X / 2, uc + 1.5 * T2X, va, vb, zc, zc + D2X6, near[2:-2:2])
        if g.purlins:
            for vp, t in ((v_r / 2, t_n), (g.S - (g.S - v_r) / 2, t_f)):
                w = min(vp, g.S - vp)
                zp = g.z_e + w * t
                self.along(
                    "Purlin", "mid", -rake, g.L + rake, vp - T2X / 2, vp + T2X / 2, zp - D2X8, zp, near[1]
                )
        if rake > 0:
            self._rake(near)

    def _ridge(
        self, v_r: float, z_top: float, u_a: float, u_b: float, parent: int, depth: float = D2X12
    ) -> None:
        self.along("Ridge", "", u_a, u_b, v_r - T2X / 2, v_r + T2X / 2, z_top - depth, z_top, parent)

    def _rake(self, near: np.ndarray) -> None:
        """Fly rafters beyond each gable end, carried by lookouts from the first inner rafter.

        The lowest lookout sits just above the rafter tails so the fly rafter's bottom end
        zone is connected (paper T10); the ridge runs out to the fly rafters' heads.
        """
        g, oh, d, rake = self.g, self.g.overhang, self.g.rafter_depth, self.g.rake
        v_r, t_n, t_f = g.v_r, g.t_near, g.t_far
        u_fly = np.array([-rake + T2X / 2, g.L + rake - T2X / 2])
        ends = near[[0, -1]]
        z_n, z_f = g.z_e - oh * t_n, g.z_e - oh * t_f
        fly = self._pair(
            "fly", u_fly, v_r - T2X / 2, v_r + T2X / 2, t_n, t_f, z_n, z_f, -oh, g.S + oh, d, ends, ends
        )
        vs_n = np.arange(-oh + 0.1, v_r - T2X / 2 - 0.15, LOOKOUT_STEP_M)
        vs_f = np.arange(g.S + oh - 0.1, v_r + T2X / 2 + 0.15, -LOOKOUT_STEP_M)
        vs = np.concatenate([vs_n, vs_f])
        top = np.concatenate(
            [g.z_e + vs_n * t_n + d * np.hypot(1.0, t_n), g.z_e + (g.S - vs_f) * t_f + d * np.hypot(1.0, t_f)]
        )
        for u_lo, u_hi, par in ((-rake, OC24 + T2X, fly[0]), (g.L - OC24 - T2X, g.L + rake, fly[1])):
            self.flat("Lookout", "", u_lo, u_hi, vs - D2X4 / 2, vs + D2X4 / 2, top - T2X, top, par)

    # -- hip ----------------------------------------------------------------------------
    def _hip(self) -> None:
        g, oh, d = self.g, self.g.overhang, self.g.rafter_depth
        L, S, e, h = g.L, g.S, g.hip_end, g.S / 2.0
        t = g.spec.pitch
        rise = h * t
        t_end = rise / e
        u = self.rafter_u()[1:-1]
        common = u[(u >= e) & (u <= L - e)]
        near = self._pair(
            "",
            common,
            h - T2X / 2,
            h + T2X / 2,
            t,
            t,
            g.z_e - oh * t,
            g.z_e - oh * t,
            -oh,
            S + oh,
            d,
            self.seat("near", common),
            self.seat("far", common),
        )
        parent = int(near[0]) if len(near) else -1
        z_top = ridge_top(g.z_e + (h - T2X / 2) * t, d, t)
        self._ridge(h, z_top, e - T2X, L - e + T2X, parent)
        # Hip rafters from each corner to the ridge ends.
        cu = np.array([0.0, 0.0, L, L])
        cv = np.array([0.0, S, 0.0, S])
        su, sv = np.array([1, 1, -1, -1]), np.array([1, -1, 1, -1])
        phi = libm.arctan2(sv * h, su * e)
        plan = np.hypot(e, h)
        t_hip = rise / plan
        ext = oh * plan / h
        hips = self.sloped(
            "Rafter",
            "hip",
            cu - libm.cos(phi) * ext,
            cv - libm.sin(phi) * ext,
            g.z_e - ext * t_hip,
            phi,
            plan + ext - T2X,
            t_hip,
            D2X12,
            np.concatenate(
                [
                    self.seat("near", cu[:1]),
                    self.seat("far", cu[1:2]),
                    self.seat("near", cu[2:3]),
                    self.seat("far", cu[3:]),
                ]
            ),
        )
        # Jacks run from the plates up to the hips: side jacks between the corners and the
        # ridge ends, end jacks across the hipped ends, all 24 in o.c.
        side = u[(u < e) | (u > L - e)]
        run = np.minimum(side, L - side) * h / e + oh - T2X
        z0 = g.z_e - oh * t
        self.sloped("Rafter", "jackn", side, -oh, z0, np.pi / 2, run, t, d, self.seat("near", side))
        self.sloped("Rafter", "jackf", side, S + oh, z0, -np.pi / 2, run, t, d, self.seat("far", side))
        v = OC24 * np.arange(1, int(np.ceil(S / OC24)))
        v = v[(v > OC24 / 2) & (v < S - OC24 / 2)]
        run = np.minimum(v, S - v) * e / h + oh - T2X
        z0 = g.z_e - oh * t_end
        self.sloped("Rafter", "ends", -oh, v, z0, 0.0, run, t_end, d, self.seat_v("start", v))
        self.sloped("Rafter", "ende", L + oh, v, z0, np.pi, run, t_end, d, self.seat_v("end", v))
        if rise >= 1.2 and len(common) > 4:
            zc = g.z_e + COLLAR_FRAC * rise
            uc = common[1:-1:2]
            w = (zc - g.z_e) / t
            self.flat("Collar", "", uc + T2X / 2, uc + 1.5 * T2X, w, S - w, zc, zc + D2X6, near[1:-1:2])
        if g.purlins:
            # Purlins at mid-run of every plane, running between the hip lines.
            vp, up = h / 2.0, e / 2.0
            zp = g.z_e + vp * t
            for vv in (vp, S - vp):
                self.flat(
                    "Purlin",
                    "side",
                    vp * e / h,
                    L - vp * e / h,
                    vv - T2X / 2,
                    vv + T2X / 2,
                    zp - D2X8,
                    zp,
                    hips[0],
                )
            for uu in (up, L - up):
                self.flat(
                    "Purlin",
                    "end",
                    uu - T2X / 2,
                    uu + T2X / 2,
                    up * h / e,
                    S - up * h / e,
                    zp - D2X8,
                    zp,
                    hips[0],
                )

    # -- gambrel ------------------------------------------------------------------------
    def _gambrel(self) -> None:
        g, oh = self.g, self.g.overhang
        S, vk, t1, t2 = g.S, g.v_k, g.spec.lower_pitch, g.spec.pitch
        d1, d2 = g.lower_depth, g.rafter_depth
        u = self.rafter_u()
        z0 = g.z_e - oh * t1
        lower = self._pair(
            "low", u, vk, S - vk, t1, t1, z0, z0, -oh, S + oh, d1, self.seat("near", u), self.seat("far", u)
        )
        # Knee purlins (4x4) where the slopes break: the lower rafters' heads butt them and
        # the upper rafters start on them.
        zk = g.z_knee
        st, en = split_run(0.0, g.L)
        knees = [
            Run(st, en, self.flat("Purlin", "knee", st, en, v_lo, v_lo + POST4, zk - POST4, zk, lower[0]))
            for v_lo in (vk, S - vk - POST4)
        ]
        h = S / 2.0
        upper = self._pair(
            "up", u, h - T2X / 2, h + T2X / 2, t2, t2, zk, zk, vk, S - vk, d2, knees[0].covering(u),
            knees[1].covering(u),
        )  # fmt: skip
        self._ridge(h, ridge_top(zk + (h - T2X / 2 - vk) * t2, d2, t2), 0.0, g.L, upper[0])
        uc = u[2:-2:2]
        self.flat(
            "Collar",
            "",
            uc + T2X / 2,
            uc + 1.5 * T2X,
            vk + POST4,
            S - vk - POST4,
            zk,
            zk + D2X6,
            upper[2:-2:2],
        )

    # -- shed ---------------------------------------------------------------------------
    def _shed(self) -> None:
        g, oh, d = self.g, self.g.overhang, self.g.rafter_depth
        S, t = g.S, g.spec.pitch
        u = self.rafter_u()
        run = S + 2 * oh
        raf = self.sloped("Rafter", "", u, -oh, g.z_e - oh * t, np.pi / 2, run, t, d, self.seat("near", u))
        # A ridge board across the rafter heads at the high edge.
        v_end = S + oh
        z_top = ridge_top(g.z_e + v_end * t, d, t)
        self.along("Ridge", "", 0.0, g.L, v_end, v_end + T2X, z_top - D2X12, z_top, raf[0])
        if g.purlins:
            vp = S / 2.0
            zp = g.z_e + vp * t
            self.along("Purlin", "mid", 0.0, g.L, vp - T2X / 2, vp + T2X / 2, zp - D2X8, zp, raf[0])
