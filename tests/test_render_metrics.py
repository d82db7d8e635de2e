"""Alpha-masked image metrics on hand-computed images."""

from __future__ import annotations

import numpy as np
import pytest

from buildbench.render import (
    RenderInputError,
    alpha_weighted_mse,
    fidelity_from_mse,
    masked_mse,
    silhouette_iou,
    to_float_image,
)


def _pair() -> tuple[np.ndarray, np.ndarray]:
    """2x2 images. Pixel (0,0): both covered, red vs black. (0,1): only predicted covered,
    white vs transparent black. (1,0): only reference covered at alpha 0.5, equal colour.
    (1,1): both transparent but with different (ignored) colours."""
    pred = np.zeros((2, 2, 4))
    ref = np.zeros((2, 2, 4))
    pred[0, 0] = [1.0, 0.0, 0.0, 1.0]
    ref[0, 0] = [0.0, 0.0, 0.0, 1.0]
    pred[0, 1] = [1.0, 1.0, 1.0, 1.0]
    pred[1, 0] = [0.5, 0.5, 0.5, 0.0]
    ref[1, 0] = [0.5, 0.5, 0.5, 0.5]
    pred[1, 1] = [1.0, 1.0, 1.0, 0.0]
    return pred, ref


def test_alpha_weighted_mse_binary_union_sums_channels() -> None:
    pred, ref = _pair()
    # Mask = 3 pixels; squared RGB sums: 1, 3, 0.
    assert alpha_weighted_mse(pred, ref) == pytest.approx((1 + 3 + 0) / 3)
    assert alpha_weighted_mse(pred, ref, channel_reduction="mean") == pytest.approx((1 + 3 + 0) / 9)


def test_alpha_weighted_mse_threshold_and_soft_mask() -> None:
    pred, ref = _pair()
    # alpha > 0.6 drops the half-covered pixel from the mask.
    assert alpha_weighted_mse(pred, ref, alpha_threshold=0.6) == pytest.approx((1 + 3) / 2)
    # Soft weights max(alpha): 1, 1, 0.5, 0.
    assert alpha_weighted_mse(pred, ref, mask="soft") == pytest.approx((1 + 3 + 0) / 2.5)


def test_masked_mse_is_the_channel_mean_over_the_union() -> None:
    pred, ref = _pair()
    assert masked_mse(pred, ref) == pytest.approx(4 / 9)
    assert masked_mse(ref, pred) == pytest.approx(4 / 9)  # symmetric


def test_identical_and_fully_transparent_images() -> None:
    pred, _ = _pair()
    assert alpha_weighted_mse(pred, pred) == 0.0
    blank_a, blank_b = np.zeros((4, 4, 4)), np.zeros((4, 4, 4))
    blank_b[..., :3] = 0.7  # colour under zero alpha does not count
    assert alpha_weighted_mse(blank_a, blank_b) == 0.0
    assert masked_mse(blank_a, blank_b) == 0.0
    assert silhouette_iou(blank_a, blank_b) == 1.0


def test_fidelity_from_mse() -> None:
    assert fidelity_from_mse(0.0) == 1.0
    assert fidelity_from_mse(0.05) == pytest.approx(0.5)
    assert fidelity_from_mse(0.1) == 0.0
    assert fidelity_from_mse(2.0) == 0.0
    assert fidelity_from_mse(0.05, lam=5.0) == pytest.approx(0.75)
    with pytest.raises(RenderInputError, match="mse"):
        fidelity_from_mse(-0.1)
    with pytest.raises(RenderInputError, match="lam"):
        fidelity_from_mse(0.1, lam=0.0)


def test_silhouette_iou() -> None:
    pred, ref = _pair()
    # Covered: pred {(0,0),(0,1)}, ref {(0,0),(1,0)} -> 1 / 3.
    assert silhouette_iou(pred, ref) == pytest.approx(1 / 3)
    assert silhouette_iou(pred, ref, alpha_threshold=0.6) == pytest.approx(1 / 2)
    assert silhouette_iou(pred, pred) == 1.0


def test_to_float_image() -> None:
    img = np.array([[[0, 51, 255, 128]]], dtype=np.uint8)
    np.testing.assert_allclose(to_float_image(img), [[[0.0, 0.2, 1.0, 128 / 255]]])
    with pytest.raises(RenderInputError, match="uint8"):
        to_float_image(img.astype(np.float32))


@pytest.mark.parametrize(
    ("pred", "ref", "message"),
    [
        (np.zeros((2, 2, 4)), np.zeros((2, 3, 4)), r"shapes differ: predicted \(2, 2, 4\) vs reference \(2, 3, 4\)"),
        (np.zeros((2, 2, 3)), np.zeros((2, 2, 3)), r"predicted image must have shape \(H, W, 4\)"),
        (np.zeros((2, 2, 4), np.uint8), np.zeros((2, 2, 4)), "to_float_image"),
        (np.full((2, 2, 4), 2.0), np.zeros((2, 2, 4)), r"lie in \[0, 1\]"),
        (np.zeros((2, 2, 4)), np.full((2, 2, 4), np.nan), "reference image values"),
    ],
)
def test_bad_images_are_rejected(pred: np.ndarray, ref: np.ndarray, message: str) -> None:
    for metric in (alpha_weighted_mse, masked_mse, silhouette_iou):
        with pytest.raises(RenderInputError, match=message):
            metric(pred, ref)


def test_bad_options_are_rejected() -> None:
    pred, ref = _pair()
    with pytest.raises(RenderInputError, match="mask must be"):
        alpha_weighted_mse(pred, ref, mask="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(RenderInputError, match="channel_reduction"):
        alpha_weighted_mse(pred, ref, channel_reduction="max")  # type: ignore[arg-type]
