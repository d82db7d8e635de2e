"""Message content parts: text runs and PNG images.

Images are carried as PNG bytes so one canonical encoding feeds both the record/replay
cache key and every provider's wire format (a data URL for OpenAI-compatible servers, a
base64 source block for Anthropic).
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from buildbench.inputs import read_bytes

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def require_field(data: Any, key: str, where: str) -> Any:
    """``data[key]``, with an error naming the place in the document when it is missing."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(data).__name__}")
    if key not in data:
        raise ValueError(f"{where}: missing field {key!r}")
    return data[key]


@dataclass(frozen=True)
class TextPart:
    """A run of text inside a message."""

    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ImagePart:
    """An image inside a message, held as PNG bytes.

    Attributes:
        png: The encoded PNG file. Build from pixels with :meth:`from_array` or from a file
            with :meth:`from_path`; other formats are converted to PNG on the way in.
    """

    png: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.png, bytes) or not self.png.startswith(_PNG_SIGNATURE):
            raise ValueError("ImagePart: png must be the bytes of a PNG file (use from_array/from_path)")

    @classmethod
    def from_array(cls, pixels: np.ndarray) -> ImagePart:
        """Encode a uint8 array of shape (H, W), (H, W, 3) RGB or (H, W, 4) RGBA as PNG."""
        from PIL import Image

        arr = np.asarray(pixels)
        if arr.dtype != np.uint8:
            raise ValueError(f"ImagePart.from_array: expected dtype uint8, got {arr.dtype}")
        if not (arr.ndim == 2 or (arr.ndim == 3 and arr.shape[2] in (3, 4))):
            raise ValueError(
                f"ImagePart.from_array: expected shape (H, W), (H, W, 3) or (H, W, 4), got {arr.shape}"
            )
        buf = io.BytesIO()
        # Fixed compression settings so equal pixels give equal bytes (and equal cache keys).
        Image.fromarray(np.ascontiguousarray(arr)).save(buf, format="PNG", compress_level=6, optimize=False)
        return cls(buf.getvalue())

    @classmethod
    def from_path(cls, path: str | Path) -> ImagePart:
        """Read an image file; PNG files are kept byte for byte, other formats re-encoded."""
        p = Path(path)
        try:
            data = read_bytes(p)
        except OSError as exc:
            raise ValueError(f"ImagePart.from_path: cannot read {p}: {exc.strerror}") from exc
        if data.startswith(_PNG_SIGNATURE):
            return cls(data)
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(io.BytesIO(data)) as img:
                return cls.from_array(np.asarray(img.convert("RGBA")))
        except UnidentifiedImageError as exc:
            raise ValueError(f"ImagePart.from_path: {p} is not an image Pillow can read") from exc

    @classmethod
    def of(cls, image: ImagePart | np.ndarray | bytes | str | Path) -> ImagePart:
        """Accept any of the image forms the harness passes around (array, PNG bytes, path)."""
        if isinstance(image, ImagePart):
            return image
        if isinstance(image, np.ndarray):
            return cls.from_array(image)
        if isinstance(image, bytes):
            return cls(image)
        return cls.from_path(image)

    @property
    def base64(self) -> str:
        return base64.b64encode(self.png).decode("ascii")

    @property
    def data_url(self) -> str:
        """The ``data:image/png;base64,...`` form OpenAI-compatible servers accept."""
        return f"data:image/png;base64,{self.base64}"

    def to_dict(self) -> dict[str, Any]:
        return {"type": "image", "png_base64": self.base64}


Part = TextPart | ImagePart


def part_from_dict(data: Any, where: str) -> Part:
    kind = require_field(data, "type", where)
    if kind == "text":
        return TextPart(str(require_field(data, "text", where)))
    if kind == "image":
        try:
            png = base64.b64decode(require_field(data, "png_base64", where), validate=True)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{where}.png_base64: not valid base64") from exc
        return ImagePart(png)
    raise ValueError(f"{where}.type: expected 'text' or 'image', got {kind!r}")
