"""Test-session settings shared by every test folder."""

from __future__ import annotations

import os
import string
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# The tests run code they wrote themselves; on a machine without bubblewrap they may run it as
# a plain process (tests that need the sandbox skip there, and the refusal itself is tested
# with this variable removed).
os.environ.setdefault("BUILDBENCH_ALLOW_UNSANDBOXED", "1")


def _keep_bytecode() -> None:
    """Let the test processes cache compiled modules where the environment forbids writing them.

    With PYTHONDONTWRITEBYTECODE set and no .pyc shipped in the virtualenv (the bootstrap skips
    precompiling), every process the tests start (CLI runs, pool and Ray workers, Inspect, TRL)
    compiled each module it imported from source again: a third or more of the CPU of a
    subprocess test (tests/cli + test_inspect.py: 64 -> 37 CPU s). The caches go to one folder
    inside the virtualenv (PYTHONPYCACHEPREFIX), not beside any source or a test's files, which
    is what the variable is usually set to avoid. Children inherit both settings; a child started
    with -B (multiprocessing copies this interpreter's flags) still reads the caches. Bytecode
    caching changes no result: each .pyc is checked against its source's mtime and size.
    """
    if not (sys.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE")):
        return
    prefix = os.environ.get("PYTHONPYCACHEPREFIX") or str(Path(sys.prefix) / "pycache")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


_keep_bytecode()


def _tiny_lm(path: Path, seed: int = 0) -> Any:
    """Write a character-level tokenizer and a 2-layer random Qwen2 to ``path`` (TRL builds
    its KL reference from a path) and return the tokenizer. Skips without the training extra."""
    torch = pytest.importorskip("torch", reason="training is an extra: torch is not installed")
    pytest.importorskip("transformers", reason="training is an extra: transformers is not installed")
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    chars = sorted(set(string.printable) | set("×→−°Δ²…’"))
    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2} | {c: i + 3 for i, c in enumerate(chars)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>",
                                   unk_token="<unk>", padding_side="left")
    fast.save_pretrained(path)
    config = Qwen2Config(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096,
                         tie_word_embeddings=True, pad_token_id=0, eos_token_id=1, bos_token_id=1)
    torch.manual_seed(seed)
    Qwen2ForCausalLM(config).save_pretrained(path)
    return fast


@pytest.fixture(scope="session")
def make_tiny_lm() -> Callable[..., Any]:
    """``make_tiny_lm(path, seed=0) -> tokenizer``: a tiny random language model on disk."""
    return _tiny_lm


@pytest.fixture()
def stored_episode(tmp_path: Path) -> Callable[..., Any]:
    """``stored_episode(config, task)``: play one episode of ``config`` on ``task`` in-process,
    check it ended ok, keep it in a store under ``tmp_path`` and return the episode the store reads
    back (its outcome as stored JSON, its metrics as scored)."""
    import asyncio

    from buildbench.harness import RunConfig, Store, Task, execute_episode

    def play(config: RunConfig, task: Task) -> Any:
        episode = asyncio.run(execute_episode(config, task, 0, tmp_path))
        assert episode.status == "ok", episode.error
        with Store(tmp_path / "run") as store:
            store.add_episode(episode)
            (kept,) = store.episodes()
        return kept

    return play


@pytest.fixture()
def platform_bits() -> Callable[..., bool]:
    """Check a result whose last bits depend on the CPU class (``buildbench.numeric_platform``).

    ``check(recorded, got, what, here=None)``: ``recorded`` maps each CPU class the snapshot was
    recorded on (``here`` names this machine's, by default ``numeric_platform()``) to its exact value. True when ``got`` equals one of them (the same code gives one of
    the values seen); an AssertionError when this CPU class was recorded with another value
    (the code changed the result); False, with a warning, on a class never recorded: the caller
    then compares what does not depend on the class (verdicts, numbers to a tolerance).
    """
    import warnings

    from buildbench.numeric_platform import numeric_platform

    def check(recorded: dict[str, Any], got: Any, what: str, here: str | None = None) -> bool:
        if got in recorded.values():
            return True
        here = here or numeric_platform()
        if here in recorded:
            raise AssertionError(f"{what}: {got!r} differs from {recorded[here]!r} recorded on this CPU class ({here})")
        warnings.warn(f"{what}: no exact value recorded for this CPU class ({here}); exact bits not compared",
                      stacklevel=2)
        return False

    return check


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Make ``xdist_group`` marks group again under ``--dist loadgroup``.

    pytest-xdist 3.8 groups a test by writing ``item._nodeid = "<nodeid>@<group>"``; pytest 9.2
    derives ``nodeid`` from ``item._id`` and never reads ``_nodeid``, so every group was ignored and
    each module/session fixture a group was meant to build once (a BIM-Edit model's generated
    tasks, a suite's shared runs) was built on both workers. This hook (after xdist's) puts the
    grouped id where pytest reads it; with a pytest that still reads ``_nodeid`` it changes nothing.
    """
    try:
        from _pytest.nodeid import coerce_node_id
    except ImportError:
        return
    for item in items:
        grouped = item.__dict__.get("_nodeid")
        if isinstance(grouped, str) and grouped != item.nodeid:
            item._id = coerce_node_id(grouped)  # type: ignore[attr-defined]
