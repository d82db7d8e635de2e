"""PNG encoding and decoding of RGBA8 images (Pillow)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from buildbench.inputs import read_bytes
from buildbench.render.errors import RenderInputError


def _as_pil(image: np.ndarray) -> Image.Image:
    img = np.asarray(image)
    if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] not in (3, 4):
        raise RenderInputError(f"expected a uint8 image of shape (H, W, 3|4), got {img.shape} {img.dtype}")
    return Image.fromarray(np.ascontiguousarray(img), mode="RGBA" if img.shape[2] == 4 else "RGB")


def to_png_bytes(image: np.ndarray, compress_level: int = 6) -> bytes:
    """Encode a uint8 (H, W, 4) RGBA or (H, W, 3) RGB image as PNG bytes (row 0 = top)."""
    buf = io.BytesIO()
    _as_pil(image).save(buf, format="PNG", compress_level=compress_level)
    return buf.getvalue()


def save_png(image: np.ndarray, path: str | Path, compress_level: int = 6) -> Path:
    """Write a uint8 RGBA/RGB image to ``path`` as PNG; returns the path."""
    out = Path(path)
    out.write_bytes(to_png_bytes(image, compress_level=compress_level))
    return out


def load_png(source: str | Path | bytes) -> np.ndarray:
    """Read a PNG (path or bytes) as uint8 RGBA (H, W, 4); images without alpha get alpha 255."""
    try:
        with Image.open(io.BytesIO(source if isinstance(source, bytes) else read_bytes(source))) as im:
            return np.asarray(im.convert("RGBA")).copy()
    except (OSError, ValueError) as exc:
        where = "PNG bytes" if isinstance(source, bytes) else str(source)
        raise RenderInputError(f"cannot read image from {where}: {exc}") from exc
