"""Mesh-level physics against the released evaluation, run on our own procedural meshes.

``tools/scenerevis_mesh_oracle`` exported each object's procedural mesh as the
``<jid>/raw_model.glb`` the released ``eval/myeval.py`` and ``eval/voxel_eval.py`` open, ran
both unmodified on the shared real rooms (sampling seeded with ``default_rng(0)``) and
recorded per room the colliding set (contacts deeper than 1 cm, and of any depth), the
out-of-bounds set (more than 1 % of 500 samples outside) and the voxel figures. Here our
``geometry=procedural`` checks replay every room. The recording names rooms by file and
line (the shared rooms are not copied), so the test skips without ``../shared``. Each room
also records a digest of the meshes it was run on: a room whose procedural shapes changed
since is stale and left out (the test fails when most rooms are: run the tool again).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildbench.scenes.mesh_physics import SolidMesh
from buildbench.suites.scenerevis.check.layout import RoomLayout, parse_layout, scene_of
from buildbench.suites.scenerevis.check.meshes import layout_meshes, mesh_voxel_figures
from buildbench.suites.scenerevis.check.physics import EVALUATION, REWARD, check_physics

RECORDING = Path(__file__).with_name("data") / "mesh-oracle-procedural.jsonl"
#: Synthetic rooms at the checks' edges (``tools/scenerevis_mesh_oracle/odd_rooms.py``: quarter
#: turns, flush and duplicated objects, 5 mm objects, a wall crossed by 0.5-2 %, an L-shaped room,
#: rolled and pitched objects, the ceiling pierced), each recorded whole.
ODD_RECORDING = RECORDING.with_name("mesh-oracle-odd-rooms.jsonl")
#: Round 2 (``odd_rooms.odd2_rooms``): objects flush to within 1e-9 m, pairs overlapping by the 1 cm
#: collision threshold exactly and 1e-6 m either side, ``-0.0`` and negative-quaternion rotations,
#: one object alone, twelve objects packed with gaps of 0 and 1e-9 m, a clockwise room with a
#: repeated and a collinear corner.
ODD2_RECORDING = RECORDING.with_name("mesh-oracle-odd2-rooms.jsonl")
SHARED = Path(__file__).resolve().parents[3] / "shared/data/scenerevis"
#: Voxel volumes agree when within this share of the release's, or this many m³ (float32
#: vertices in the GLB can move a voxel centre across a rounding boundary).
VOXEL_REL, VOXEL_ABS_M3 = 0.02, 0.002

needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/data/scenerevis (the real rooms)")


def _scene(source: str, line: int) -> dict:
    text = (SHARED / source).read_text(encoding="utf-8")
    if source.endswith(".jsonl"):
        return dict(scene_of(json.loads(text.splitlines()[line - 1])))
    return json.loads(text)


def _digest(meshes: list[SolidMesh]) -> str:
    import hashlib

    return hashlib.blake2b(b"".join(m.key for m in meshes), digest_size=8).hexdigest()


def _close(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= max(VOXEL_ABS_M3, VOXEL_REL * abs(theirs))


@needs_shared
@pytest.mark.slow
def test_procedural_physics_agrees_with_the_released_evaluation() -> None:
    records = [json.loads(line) for line in RECORDING.read_text(encoding="utf-8").splitlines()]
    assert len(records) >= 500
    agree, current, voxels, voxel_agree, differ = 0, 0, 0, 0, []
    for rec in records:
        layout = parse_layout(_scene(rec["source"], rec["line"]))
        assert len(layout) == rec["n_objects"]
        meshes = layout_meshes(layout, rec["level"])
        if _digest(meshes) != rec["mesh_digest"]:
            continue
        current += 1
        evaluation = check_physics(layout, EVALUATION, geometry=rec["level"])
        reward = check_physics(layout, REWARD, geometry=rec["level"])
        same = (list(evaluation.colliding) == rec["colliding"] and list(reward.colliding) == rec["colliding_any"]
                and list(evaluation.out_of_bounds) == rec["out_of_bounds"])
        agree += same
        if not same:
            differ.append(f"{rec['source']}:{rec['line']}")
        if "voxel" in rec:
            voxels += 1
            figures = mesh_voxel_figures(layout, meshes, 0.05)
            voxel_agree += _close(figures.total_oob_m3, rec["voxel"]["total_oob_volume"]) and _close(
                figures.total_collision_m3, rec["voxel"]["total_collision_volume"])
    assert current >= 0.9 * len(records), (
        f"only {current}/{len(records)} rooms have the recorded meshes: the procedural shapes changed; "
        "run tools/scenerevis_mesh_oracle again")
    assert agree >= 0.99 * current, f"{agree}/{current} rooms agree; differ: {differ[:10]}"
    assert voxels >= 10 and voxel_agree >= 0.99 * voxels, f"voxel figures agree on {voxel_agree}/{voxels} rooms"


def _inside(layout: RoomLayout, a: int, b: int) -> bool:
    """Whether one object's box lies within the other's axis-aligned bounds."""
    corners = layout.corners()
    lo, hi = corners.min(axis=1), corners.max(axis=1)
    return bool((lo[a] >= lo[b] - 1e-9).all() and (hi[a] <= hi[b] + 1e-9).all()) or bool(
        (lo[b] >= lo[a] - 1e-9).all() and (hi[b] <= hi[a] + 1e-9).all())


@pytest.mark.parametrize(("recording", "kinds"), [
    (ODD_RECORDING, {"quarter", "flush", "twins", "tiny", "threshold", "l_shape", "tilted", "ceiling"}),
    (ODD2_RECORDING, {"hair", "depth", "signed_zero", "single", "crowd", "odd_polygon"}),
])
def test_procedural_physics_agrees_on_odd_rooms(recording: Path, kinds: set[str]) -> None:
    """Synthetic rooms at the checks' edges: the 1 cm colliding set, the out-of-bounds set and the
    voxel figures agree on every room. Contact of any depth may differ only for an object lying
    wholly inside another's box (a 5 mm lamp inside a bookshelf's 25 mm base, the two bottoms
    coplanar): FCL's answer on that tie turns on the last bits of the placed vertices, which the
    release bakes into float32 world coordinates and we keep as float64 local meshes placed by a
    transform (README of tools/scenerevis_mesh_oracle)."""
    records = [json.loads(line) for line in recording.read_text(encoding="utf-8").splitlines()]
    assert kinds <= {rec["room_id"].rsplit("-", 1)[0] for rec in records}
    for rec in records:
        layout = parse_layout(rec["scene"])
        meshes = layout_meshes(layout, rec["level"])
        assert _digest(meshes) == rec["mesh_digest"], f"{rec['room_id']}: shapes changed; run the tool again"
        evaluation = check_physics(layout, EVALUATION, geometry=rec["level"])
        assert list(evaluation.colliding) == rec["colliding"], rec["room_id"]
        assert list(evaluation.out_of_bounds) == rec["out_of_bounds"], rec["room_id"]
        ours = {i for c in check_physics(layout, REWARD, geometry=rec["level"]).contacts for i in (c.a, c.b)}
        theirs = set(rec["colliding_any"])
        for i in ours ^ theirs:
            assert any(_inside(layout, i, j) for j in range(len(layout)) if j != i), (rec["room_id"], i)
        figures = mesh_voxel_figures(layout, meshes, 0.05)
        if _repeats_a_corner(rec["scene"]):
            # The release's voxel room mesh indexes the floor triangulation's vertices (the
            # 'triangle' engine drops a repeated corner) into the corner list that still holds it,
            # so its floor and ceiling join the wrong corners and in-room voxels count as outside
            # (0.61 m³ where the same room without the repeat gives 0.074). We read the polygon it
            # draws: the same figures as without the repeated corner (suite README, "Where we depart").
            clean = parse_layout(_without_repeated_corners(rec["scene"]))
            assert figures == mesh_voxel_figures(clean, layout_meshes(clean, rec["level"]), 0.05), rec["room_id"]
            assert not _close(figures.total_oob_m3, rec["voxel"]["total_oob_volume"]), rec["room_id"]
            continue
        assert _close(figures.total_oob_m3, rec["voxel"]["total_oob_volume"]), rec["room_id"]
        assert _close(figures.total_collision_m3, rec["voxel"]["total_collision_volume"]), rec["room_id"]


def _repeats_a_corner(scene: dict) -> bool:
    corners = [tuple(p) for p in scene["bounds_bottom"]]
    return any(a == b for a, b in zip(corners, corners[1:] + corners[:1], strict=True))


def _without_repeated_corners(scene: dict) -> dict:
    keep = [i for i, p in enumerate(scene["bounds_bottom"]) if p != scene["bounds_bottom"][i - 1]]
    return {**scene, "bounds_bottom": [scene["bounds_bottom"][i] for i in keep],
            "bounds_top": [scene["bounds_top"][i] for i in keep]}
