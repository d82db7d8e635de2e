"""A small hand-built, code-compliant timber frame and single-fault variants of it.

Used by the validator tests and the validation benchmark (loaded by path, so it is not a
test module). The frame: a one-storey gable house on sills; 2x10 joists at 406 mm o.c.
between rim boards; front and back 2x4 stud walls with sole and top plates; 2x8 rafters
at 610 mm o.c. from the top plates to a ridge board; an interior elevated sill on three
4x4 posts (so the cantilever test has something to check). Every dimension below is the
hand computation the tests rely on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from buildbench.suites.dreamhouse.model import Member, Structure

SILL_T, SILL_W = 0.038, 0.140  # 2x6 laid flat
RIM_T = 0.038
STUD_W, STUD_D = 0.038, 0.089  # 2x4
PLATE_T = 0.038
RAFTER_D = 0.184  # 2x8
RIDGE_D = 0.235
PITCH_RAD = math.radians(30.0)
STUD_LEN = 2.4


@dataclass(frozen=True)
class FrameSpec:
    """Parameters of the hand-built frame (metres)."""

    bays: int = 12  # joist/stud bays along x
    depth_y: float = 3.6  # outside depth, front (y=0) to back
    joist_mm: tuple[int, int] = (38, 235)  # 2x10
    joist_oc: float = 0.406
    stud_oc: float = 0.406
    rafter_oc: float = 0.610
    elevated: bool = True  # interior elevated sill on posts

    @property
    def width_x(self) -> float:
        """Outside width: the bays plus one joist thickness."""
        return self.bays * self.joist_oc + self.joist_mm[0] / 1000.0


def build_frame(
    spec: FrameSpec = FrameSpec(), origin: tuple[float, float] = (0.0, 0.0), tag: str = ""
) -> list[Member]:
    """Members of the frame, offset by ``origin`` in plan, names suffixed with ``tag``."""
    ox, oy = origin
    wx, dy = spec.width_x, spec.depth_y
    jw, jd = spec.joist_mm[0] / 1000.0, spec.joist_mm[1] / 1000.0
    out: list[Member] = []

    def box(name: str, lo: tuple[float, float, float], hi: tuple[float, float, float]) -> None:
        out.append(
            Member.from_aabb(f"{name}{tag}", (lo[0] + ox, lo[1] + oy, lo[2]), (hi[0] + ox, hi[1] + oy, hi[2]))
        )

    # Foundation: perimeter sills, z 0 – 0.038.
    box("Sill_front", (0, 0, 0), (wx, SILL_W, SILL_T))
    box("Sill_back", (0, dy - SILL_W, 0), (wx, dy, SILL_T))
    box("Sill_left", (0, SILL_W, 0), (SILL_W, dy - SILL_W, SILL_T))
    box("Sill_right", (wx - SILL_W, SILL_W, 0), (wx, dy - SILL_W, SILL_T))
    # Floor: rims front/back, joists along y between them, on the sills.
    z0, z1 = SILL_T, SILL_T + jd
    box("Rim_front", (0, 0, z0), (wx, RIM_T, z1))
    box("Rim_back", (0, dy - RIM_T, z0), (wx, dy, z1))
    for k in range(spec.bays + 1):
        x = k * spec.joist_oc
        box(f"Joist_{k:03d}", (x, RIM_T, z0), (x + jw, dy - RIM_T, z1))
    # Walls front and back: sole plate, studs, top plate.
    zs = z1 + PLATE_T
    zt = zs + STUD_LEN
    top = zt + PLATE_T
    n_studs = int(round((wx - STUD_W) / spec.stud_oc)) + 1
    for side, y0 in (("front", 0.0), ("back", dy - STUD_D)):
        box(f"SolePlate_{side}", (0, y0, z1), (wx, y0 + STUD_D, zs))
        for k in range(n_studs):
            x = min(k * spec.stud_oc, wx - STUD_W)
            box(f"Stud_{side}_{k:02d}", (x, y0, zs), (x + STUD_W, y0 + STUD_D, zt))
        box(f"TopPlate_{side}", (0, y0, zt), (wx, y0 + STUD_D, top))
    # Roof: rafters whose AABB runs from the wall face to the ridge face, bottom on the plate.
    ridge_y0 = dy / 2.0 - 0.019
    run = ridge_y0  # AABB plan depth of one rafter
    length = (run - RAFTER_D * math.sin(PITCH_RAD)) / math.cos(PITCH_RAD)
    rise = length * math.sin(PITCH_RAD) + RAFTER_D * math.cos(PITCH_RAD)
    n_rafters = int(math.ceil((wx - STUD_W) / spec.rafter_oc)) + 1
    for k in range(n_rafters):
        x = min(k * spec.rafter_oc, wx - STUD_W) + STUD_W / 2.0
        for side, yc, angle in (("front", run / 2.0, PITCH_RAD), ("back", dy - run / 2.0, -PITCH_RAD)):
            out.append(
                Member.box(
                    f"Rafter_{side}_{k:02d}{tag}", (STUD_W, length, RAFTER_D), (x + ox, yc + oy, top + rise / 2.0),
                    (angle, 0.0, 0.0),
                )
            )  # fmt: skip
    box("Ridge_01", (0, ridge_y0, top + rise - RIDGE_D), (wx, ridge_y0 + 0.038, top + rise))
    if spec.elevated:
        # Interior sill at z 1.2 on three grounded 4x4 posts, 1.8 m apart (< 3.0 m).
        zl = 1.2
        box("Sill_loft", (0.5, 1.5, zl), (0.5 + 3.8, 1.5 + SILL_W, zl + SILL_T))
        for k, x in enumerate((0.55, 2.35, 4.15)):
            box(f"BeamPost_{k:02d}", (x, 1.5, 0.0), (x + 0.089, 1.589, zl))
    return out


def frame(spec: FrameSpec = FrameSpec()) -> Structure:
    """The compliant frame as a structure."""
    return Structure.from_members(build_frame(spec))


def without(members: list[Member], *names: str) -> Structure:
    """The members minus those named (each name must exist)."""
    have = {m.name for m in members}
    missing = [n for n in names if n not in have]
    assert not missing, f"no member named {missing}"
    return Structure.from_members([m for m in members if m.name not in names])


def replaced(
    members: list[Member],
    name: str,
    lo_delta: tuple[float, float, float],
    hi_delta: tuple[float, float, float],
    size_m: tuple[float, float, float] | None = None,
) -> Structure:
    """The members with the axis-aligned member ``name`` moved by corner deltas (or resized)."""
    out = []
    found = False
    for m in members:
        if m.name == name:
            found = True
            lo = m.location_m - m.size_m / 2.0 + np.asarray(lo_delta)
            hi = m.location_m + m.size_m / 2.0 + np.asarray(hi_delta)
            if size_m is not None:
                centre = (lo + hi) / 2.0
                lo, hi = centre - np.asarray(size_m) / 2.0, centre + np.asarray(size_m) / 2.0
            m = Member.from_aabb(name, lo, hi)
        out.append(m)
    assert found, f"no member named {name}"
    return Structure.from_members(out)


def moved(members: list[Member], name: str, delta_m: tuple[float, float, float]) -> Structure:
    """The members with member ``name`` translated by ``delta_m`` (rotation kept)."""
    out = []
    for m in members:
        if m.name == name:
            mat = m.matrix_world.copy()
            mat[:3, 3] += np.asarray(delta_m)
            m = Member(m.name, m.size_m, mat)
        out.append(m)
    assert any(m.name == name for m in members), f"no member named {name}"
    return Structure.from_members(out)


def renamed(members: list[Member], name: str, new_name: str) -> Structure:
    """The members with member ``name`` renamed."""
    assert any(m.name == name for m in members), f"no member named {name}"
    return Structure.from_members(
        [Member(new_name, m.size_m, m.matrix_world) if m.name == name else m for m in members]
    )


def tiled(total: int) -> Structure:
    """Compliant frames side by side, 0.368 m apart, with exactly ``total`` members.

    Mostly whole 12-bay frames, then smaller frames (no loft) to make up the count, so the
    result passes every test; the gap keeps joists of neighbouring frames at a standard
    406 mm o.c.
    """
    specs = [FrameSpec()] + [FrameSpec(bays=b, elevated=False) for b in range(2, 12)]
    size = {spec: len(build_frame(spec)) for spec in specs}
    # Fewest frames reaching the total exactly (coin change over frame sizes).
    best: dict[int, list[FrameSpec]] = {0: []}
    for t in range(1, total + 1):
        options = [best[t - size[sp]] + [sp] for sp in specs if t - size[sp] in best]
        if options:
            best[t] = min(options, key=len)
    assert total in best, f"no combination of frame sizes {sorted(size.values())} makes {total} members"
    members: list[Member] = []
    x = 0.0
    for k, spec in enumerate(best[total]):
        members += build_frame(spec, origin=(x, 0.0), tag=f"_h{k:02d}")
        x += spec.width_x + spec.joist_oc - spec.joist_mm[0] / 1000.0
    return Structure.from_members(members)
