"""Reading asset files safely: inside the configured folder, no links, bounded sizes.

An asset folder may come from anyone (a download, a shared drive), so a file is opened only
when every path component below the folder is a plain directory or file (no symbolic links,
checked with ``lstat``), its resolved path lies inside the resolved folder, and it is under
:data:`MAX_ASSET_BYTES`. Ids are refused unless they are plain file names.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

from buildbench.scenes.assets.mesh import AssetError

#: Larger asset files are refused before reading (the largest 3D-FUTURE model is ~100 MB).
MAX_ASSET_BYTES = 1 << 30
#: Meshes with more triangles are refused (checked from the file before loading it).
MAX_FACES = 10**7
#: Larger textures are refused before decoding (16k × 16k).
MAX_TEXTURE_PIXELS = 1 << 28

_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.()-]{0,159}")


def check_id(asset_id: str, what: str) -> str:
    """``asset_id`` when it is a plain file name (no separators, no ``..``)."""
    if not _SAFE_ID.fullmatch(asset_id) or ".." in asset_id:
        raise AssetError(f"{what} {asset_id!r}: not a valid asset id")
    return asset_id


def safe_file(root: Path, *parts: str) -> Path | None:
    """``root/parts…`` when it exists as a regular file reached without links and inside
    ``root``; None when it does not exist; AssetError when a link or escape is met."""
    base = root.resolve()
    current = base
    for i, part in enumerate(parts):
        current = current / part
        try:
            info = current.lstat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise AssetError(f"{current}: cannot read ({exc.strerror or exc})") from None
        if stat.S_ISLNK(info.st_mode):
            raise AssetError(f"{current}: is a symbolic link (asset folders are read without following links)")
        last = i == len(parts) - 1
        if last and not stat.S_ISREG(info.st_mode):
            raise AssetError(f"{current}: not a regular file")
        if not last and not stat.S_ISDIR(info.st_mode):
            return None
    if not current.resolve().is_relative_to(base):  # belt and braces: no escape whatever the path
        raise AssetError(f"{current}: lies outside the asset folder {base}")
    return current


def read_bytes(path: Path) -> bytes:
    """The file's bytes, refusing files over :data:`MAX_ASSET_BYTES` before reading."""
    try:
        size = path.stat().st_size
        if size > MAX_ASSET_BYTES:
            raise AssetError(f"{path}: {size} bytes is over the {MAX_ASSET_BYTES}-byte asset limit")
        return path.read_bytes()
    except OSError as exc:
        raise AssetError(f"{path}: cannot read ({exc.strerror or exc})") from None
