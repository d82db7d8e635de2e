"""Every Python block of the README's "Use it from your stack" section runs as a newcomer would run
it: as a script of its own, in an empty folder, offline. What needs the internet there is pointed
at local stand-ins: the Hugging Face model ids at a tiny random Qwen2 saved by the test (with
Qwen2.5's chat template, which TRL ships), the vLLM URL at a loopback OpenAI-compatible server.
A block whose imports are not installed (an extra) is skipped and says which.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Use it from your stack"


def _blocks() -> dict[str, str]:
    """The section's python blocks by the heading above them (its name before a parenthesis)."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index(SECTION)
    out: dict[str, str] = {}
    heading, block = "", None
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if block is not None:
            if line == "```":
                out[heading] = "\n".join(block) + "\n"
                block = None
            else:
                block.append(line)
        elif line.startswith("### "):
            heading = line[4:].split(" (")[0].strip()
        elif line == "```python":
            block = []
    return out


BLOCKS = _blocks()


def test_the_section_has_a_block_for_each_stack() -> None:
    assert set(BLOCKS) == {"Gymnasium", "Inspect AI", "TRL", "verifiers", "SFT export", "Ray"}


def _missing(code: str) -> list[str]:
    tops = {m.split(".")[0] for m in re.findall(r"^\s*(?:from|import) ([\w.]+)", code, flags=re.M)}
    return sorted(t for t in tops if importlib.util.find_spec(t) is None)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory, make_tiny_lm: Callable[..., Any]) -> Path:
    path = tmp_path_factory.mktemp("tiny-qwen")
    tok = make_tiny_lm(path)
    trl = pytest.importorskip("trl", reason="training is an extra: trl is not installed")
    tok.chat_template = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()
    tok.save_pretrained(path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in BLOCKS])
def test_readme_block_runs(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    code = BLOCKS[name]
    missing = _missing(code)
    if missing:
        pytest.skip(f"README block {name!r} needs {', '.join(missing)} (an extra) that is not installed")
    if "Qwen/Qwen2.5-0.5B-Instruct" in code:
        code = code.replace("Qwen/Qwen2.5-0.5B-Instruct", str(request.getfixturevalue("tiny_model")))
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken"), "HF_HUB_OFFLINE": "1",
           "TRL_EXPERIMENTAL_SILENCE": "1", "RAY_USAGE_STATS_ENABLED": "0"}
    script = tmp_path / "snippet.py"
    if "http://127.0.0.1:8000/v1" in code:
        from buildbench.llm import ScriptedServer

        with ScriptedServer(lambda request: "I would stack five blocks.") as server:
            script.write_text(code.replace("http://127.0.0.1:8000/v1", server.base_url))
            done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
                                  text=True, timeout=600)
    else:
        script.write_text(code)
        done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
    assert done.returncode == 0, f"README block {name!r} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    if name == "Gymnasium":
        assert done.stdout.splitlines()[0] == "1.0 True 1.0"
    if name == "Inspect AI":
        assert done.stdout.startswith("0.0 passed = 0")
