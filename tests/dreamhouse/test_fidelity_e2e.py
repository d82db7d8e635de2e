"""DreamHouse fidelity end to end: the oracle, run through the Runner under every protocol and
fully scored (renders on), passes with S = 1 and T = 1; and the coincidence tolerance that
makes that exact keeps V a plain voxel IoU for frames that really differ."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from buildbench.geometry import voxel_iou
from buildbench.harness import RunConfig, Runner, Store
from buildbench.harness.errors import ConfigError
from buildbench.suites.dreamhouse.fidelity import (
    coincident_members,
    snap_to_target,
    topological_fidelity,
    voxel_similarity,
)
from buildbench.suites.dreamhouse.model import Member, Structure
from buildbench.suites.dreamhouse.protocols import DESCRIPTIONS
from buildbench.suites.dreamhouse.tasks import make_task, target_structure
from buildbench.suites.dreamhouse.views import VIEW_NAMES, as_submitted

#: Demo tasks the Runner takes with limit=2; both have pitched roofs whose rotated rafters
#: reach the scorer a few micrometres off (Euler angles and matrices at 6 decimals).
N_TASKS = 2


@pytest.mark.timeout(120)
@pytest.mark.parametrize("protocol", sorted(DESCRIPTIONS))
def test_oracle_passes_with_s_and_t_exactly_one(tmp_path, protocol):
    config = RunConfig(suite="dreamhouse", agent="oracle", protocol=protocol, split="demo",
                       limit=N_TASKS, seed=0, workers=0)
    result = Runner(config, tmp_path).run()
    assert result.summary["status"] == {"ok": N_TASKS}
    with Store(tmp_path) as store:
        episodes = list(store.episodes())
    assert len(episodes) == N_TASKS
    for ep in episodes:
        m = ep.metrics
        assert m["structural_pass"] == 1.0, ep.task_id
        assert m["visual_fidelity"] == 1.0, (ep.task_id, m["visual_fidelity"])
        assert [m[f"visual_{v}"] for v in VIEW_NAMES] == [1.0] * len(VIEW_NAMES)
        topo = (m["census"], m["centroid_match"], m["voxel_iou"], m["topological_fidelity"])
        assert topo == (1.0, 1.0, 1.0, 1.0), (ep.task_id, topo)
        assert (m["visual_pass"], m["joint_pass"], m["joint_pass_mean"]) == (1.0, 1.0, 1.0)


@pytest.fixture(scope="module")
def frame() -> Structure:
    """A generated frame at stored precision, many of whose faces lie on voxel-centre planes."""
    return as_submitted(target_structure(make_task("TH_01_0002")))


def _moved(frame: Structure, *, shift_m: float = 0.0, jitter_m: float = 0.0, seed: int = 7) -> Structure:
    """``frame`` shifted along x, each member's centre, sizes and orientation jittered."""
    rng = np.random.default_rng(seed)
    n = len(frame)
    mats = frame.matrices.copy()
    mats[:, 0, 3] += shift_m
    mats[:, :3, 3] += rng.uniform(-jitter_m, jitter_m, (n, 3))
    mats[:, :3, :3] = Rotation.from_rotvec(rng.uniform(-jitter_m, jitter_m, (n, 3))).as_matrix() @ mats[:, :3, :3]
    return Structure.from_arrays(frame.names, frame.sizes_m + rng.uniform(-jitter_m, jitter_m, (n, 3)), mats)


def test_a_copy_perturbed_by_a_micrometre_keeps_v_and_t_at_one(frame):
    copy = _moved(frame, jitter_m=1e-6)
    v = voxel_similarity(copy, frame)
    assert (v.iou, v.snapped_members) == (1.0, len(frame))
    assert topological_fidelity(copy, frame).score == 1.0


def test_a_copy_shifted_by_ten_centimetres_scores_the_plain_voxel_iou(frame):
    shifted = _moved(frame, shift_m=0.1)
    v = voxel_similarity(shifted, frame)
    assert v.snapped_members == 0
    assert v.iou == voxel_iou(shifted.to_boxes(), frame.to_boxes(), v.pitch_m)
    assert v.iou < 0.5
    assert topological_fidelity(shifted, frame).score < 1.0


def _cube(dx_m: float) -> Structure:
    # Faces at 0.0625 and 0.9375: exactly on the voxel centres of a 0.125 m grid.
    lo, hi = (0.0625 + dx_m, 0.0625, 0.0625), (0.9375 + dx_m, 0.9375, 0.9375)
    return Structure.from_members([Member.from_aabb("Post_1", lo, hi)])


def test_faces_on_voxel_centres_flip_a_layer_unless_within_the_tolerance():
    # 8 × 8 × 8 centres in the target; moved by 1 µm the candidate loses the x = 0.0625
    # layer: 448 / 512 = 0.875 without the tolerance, 1 with it. At 1 mm (beyond it) the
    # same layer is lost for real and V is the plain IoU again.
    target = _cube(0.0)
    assert voxel_similarity(_cube(1e-6), target, pitch_m=0.125, tolerance_m=0.0).iou == 0.875
    assert voxel_similarity(_cube(1e-6), target, pitch_m=0.125).iou == 1.0
    far = voxel_similarity(_cube(1e-3), target, pitch_m=0.125)
    assert (far.iou, far.snapped_members) == (0.875, 0)


def test_coincidence_ignores_names_and_how_a_box_is_described():
    target = Structure.from_members([Member.box("Stud_1", (0.038, 0.089, 2.4), (1.0, 2.0, 1.2), (0, 0, 0))])
    # The same box turned a quarter about z with its x and y sizes swapped, renamed, 20 µm off.
    same = Member.box("Post_9", (0.089, 0.038, 2.4), (1.0 + 2e-5, 2.0, 1.2), (0, 0, np.pi / 2))
    other = Member.box("Post_8", (0.089, 0.038, 2.4), (1.0 + 2e-4, 2.0, 1.2), (0, 0, np.pi / 2))
    cand = Structure.from_members([other, same])
    match = coincident_members(cand, target)
    assert match.candidate_index.tolist() == [1] and match.target_index.tolist() == [0]
    snapped = snap_to_target(cand, target)
    assert snapped.names == ("Post_8", "Post_9")
    np.testing.assert_array_equal(snapped.sizes_m[1], target.sizes_m[0])
    np.testing.assert_allclose(snapped.matrices[1], target.matrices[0], atol=1e-15)
    np.testing.assert_array_equal(snapped.matrices[0], cand.matrices[0])
    with pytest.raises(ConfigError, match="tolerance_m"):
        coincident_members(cand, target, tolerance_m=-1.0)
