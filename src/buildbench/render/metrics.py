"""Alpha-masked image metrics on RGBA float images in [0, 1] of shape (H, W, 4).

The DreamHouse visual-fidelity score (its Eq. 1) is built from two functions here:

    MSE_v = Σ_p m(p)·‖R̂(p) − R(p)‖² / Σ_p m(p),   m = union of the two alpha masks
    S_v   = max(0, 1 − λ·MSE_v)

:func:`alpha_weighted_mse` computes the first with the mask and channel reduction as
parameters; :func:`fidelity_from_mse` the second with λ as a parameter. Where no pixel is
in the mask (both images fully transparent) the images agree everywhere that counts: the MSE
is defined as 0 and the silhouette IoU as 1.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np

from buildbench.render.errors import RenderInputError

MaskMode = Literal["binary", "soft"]
ChannelReduction = Literal["sum", "mean"]


def to_float_image(image: np.ndarray) -> np.ndarray:
    """uint8 RGBA (H, W, 4) → float64 in [0, 1]."""
    img = np.asarray(image)
    if img.dtype != np.uint8:
        raise RenderInputError(f"to_float_image expects uint8, got {img.dtype}")
    return img.astype(np.float64) / 255.0


def alpha_weighted_mse(
    predicted: np.ndarray,
    reference: np.ndarray,
    *,
    mask: MaskMode = "binary",
    alpha_threshold: float = 0.0,
    channel_reduction: ChannelReduction = "sum",
) -> float:
    """Weighted mean over pixels of the squared RGB error, weighted by the union alpha mask.

    Args:
        predicted: Float RGBA image (H, W, 4) in [0, 1] (DreamHouse: the generated render).
        reference: Float RGBA image of the same shape (the target render).
        mask: "binary": m(p) = 1 where either alpha > ``alpha_threshold``, else 0.
            "soft": m(p) = max of the two alphas (a fuzzy union; edges count partially).
        alpha_threshold: Threshold for the binary mask (DreamHouse leaves it unspecified;
            0 means any coverage).
        channel_reduction: "sum" adds the three squared channel errors (‖·‖² as written in
            DreamHouse Eq. 1, range [0, 3]); "mean" averages them (range [0, 1]).

    Returns:
        The MSE; 0.0 when the mask is empty.

    Raises:
        RenderInputError: on shape mismatch, non-float input or values outside [0, 1].
    """
    pred, ref = _check_pair(predicted, reference)
    if mask == "binary":
        weights = ((pred[..., 3] > alpha_threshold) | (ref[..., 3] > alpha_threshold)).astype(np.float64)
    elif mask == "soft":
        weights = np.maximum(pred[..., 3], ref[..., 3])
    else:
        raise RenderInputError(f"mask must be 'binary' or 'soft', got {mask!r}")
    if channel_reduction not in ("sum", "mean"):
        raise RenderInputError(f"channel_reduction must be 'sum' or 'mean', got {channel_reduction!r}")
    total_weight = float(weights.sum())
    if total_weight == 0.0:
        return 0.0
    squared = np.square(pred[..., :3] - ref[..., :3]).sum(axis=-1)
    if channel_reduction == "mean":
        squared /= 3.0
    return float((weights * squared).sum() / total_weight)


def masked_mse(predicted: np.ndarray, reference: np.ndarray, *, alpha_threshold: float = 0.0) -> float:
    """Plain MSE (mean over pixels and the three RGB channels) where either alpha > threshold.

    Returns 0.0 when neither image covers any pixel.
    """
    return alpha_weighted_mse(
        predicted, reference, mask="binary", alpha_threshold=alpha_threshold, channel_reduction="mean"
    )


def fidelity_from_mse(mse: float, lam: float = 10.0) -> float:
    """S = max(0, 1 − λ·MSE): 1 for identical images, 0 once MSE ≥ 1/λ (DreamHouse λ = 10)."""
    if not (np.isfinite(mse) and mse >= 0):
        raise RenderInputError(f"mse must be a finite number >= 0, got {mse}")
    if not (np.isfinite(lam) and lam > 0):
        raise RenderInputError(f"lam must be a finite number > 0, got {lam}")
    return max(0.0, 1.0 - lam * float(mse))


def silhouette_iou(predicted: np.ndarray, reference: np.ndarray, *, alpha_threshold: float = 0.0) -> float:
    """|A ∩ B| / |A ∪ B| of the pixel sets with alpha > threshold; 1.0 when both are empty."""
    pred, ref = _check_pair(predicted, reference)
    a = pred[..., 3] > alpha_threshold
    b = ref[..., 3] > alpha_threshold
    union = int(np.count_nonzero(a | b))
    if union == 0:
        return 1.0
    return int(np.count_nonzero(a & b)) / union


class _ImagePair(NamedTuple):
    predicted: np.ndarray
    reference: np.ndarray


def _check_pair(predicted: np.ndarray, reference: np.ndarray) -> _ImagePair:
    images = []
    for name, img in (("predicted", predicted), ("reference", reference)):
        arr = np.asarray(img)
        if arr.ndim != 3 or arr.shape[2] != 4:
            raise RenderInputError(f"{name} image must have shape (H, W, 4) RGBA, got {arr.shape}")
        if not np.issubdtype(arr.dtype, np.floating):
            raise RenderInputError(
                f"{name} image must be float in [0, 1], got dtype {arr.dtype} (convert uint8 with to_float_image)"
            )
        if arr.size and not (np.all(np.isfinite(arr)) and arr.min() >= 0.0 and arr.max() <= 1.0):
            raise RenderInputError(f"{name} image values must be finite and lie in [0, 1]")
        images.append(arr.astype(np.float64, copy=False))
    if images[0].shape != images[1].shape:
        raise RenderInputError(
            f"image shapes differ: predicted {images[0].shape} vs reference {images[1].shape} "
            "(resize both to the same size first)"
        )
    return _ImagePair(images[0], images[1])
