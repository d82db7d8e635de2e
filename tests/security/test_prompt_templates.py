"""Prompt files are data: a ``-o prompts=DIR`` template that asks for anything but a plain
placeholder is refused before the run, naming the file and line, and no secret reaches the
model; the suites' own templates render exactly as ``str.format`` rendered them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from buildbench.harness import ConfigError, get_suite
from buildbench.harness.prompts import PromptFiles, placeholders

SECRET = "sk-prompt-canary-51c9"
SPY = """
import json, os
def chat(messages, tools=None, **options):
    with open(os.environ["BYO_SPY"], "a") as f:
        f.write(json.dumps(messages) + "\\n")
    return '{"blocks": [{"center": [0, 0, 0.5], "size": [0.5, 0.5, 1.0]}]}'
"""
ATTACKS = [
    "{model_path.with_name.__globals__[os].environ[OPENAI_API_KEY]}",
    "{target_height_m.__class__.__mro__}",
    "{max_blocks[0]}",
    "{max_blocks!r}",
    "{target_height_m:>999999999}",
    "{OPENAI_API_KEY}",
    "{0}",
    "{}",
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("attack", ATTACKS)
def test_a_template_field_is_refused_before_the_run(tmp_path: Path, attack: str) -> None:
    (tmp_path / "spy.py").write_text(SPY)
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "task.md").write_text(f"Build a tower.\nHeight {{target_height_m}} m.\nAlso {attack} please.\n")
    seen = tmp_path / "seen.jsonl"
    out = subprocess.run([sys.executable, "-m", "buildbench", "run", "example", "--split", "demo", "--limit", "1",
                          "-m", f"python:{tmp_path}/spy.py:chat", "-o", f"prompts={prompts}",
                          "--run-dir", str(tmp_path / "run"), "-q"], capture_output=True, text=True, timeout=100,
                         env={**os.environ, "BYO_SPY": str(seen), "OPENAI_API_KEY": SECRET})
    assert out.returncode == 2, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in out.stderr, out.stderr
    assert f"{prompts / 'task.md'}:3:" in lines[0], lines[0]
    assert not seen.exists() and SECRET not in out.stdout + out.stderr


def test_the_released_attack_on_bimedit_names_file_and_line(tmp_path: Path) -> None:
    own = get_suite("bimedit").prompts
    assert own is not None and own.fields
    (tmp_path / "user.md").write_text("Edit the model.\n{model_path.with_name.__globals__[os].environ[OPENAI_API_KEY]}\n")
    with pytest.raises(ConfigError, match=rf"{tmp_path}/user.md:2: .* is not a placeholder"):
        own.check_folder(tmp_path)


def test_render_refuses_fields_whatever_the_folder_check_said(tmp_path: Path) -> None:
    files = PromptFiles(tmp_path, fields=True)
    (tmp_path / "raw.md").write_text("line one\n{x.__class__}\n")
    with pytest.raises(ConfigError, match=r"raw.md:2: '\{x.__class__\}' is not a placeholder"):
        files.render("raw.md", x=1)
    (tmp_path / "t.md").write_text("{n:.2f} {s} {{literal}}")
    assert files.render("t.md", n=2, s="a") == "2.00 a {literal}"
    with pytest.raises(ConfigError, match="formats a number"):
        files.render("t.md", n="2", s="a")
    with pytest.raises(ConfigError, match=r"unknown placeholder \{s\}"):
        files.render("t.md", n=2)


def _sample(text: str, where: str) -> dict[str, object]:
    """A distinct value per placeholder: a number where the template formats one."""
    names = placeholders(text, where)
    return {n: 1.23456 if f"{{{n}:" in text else f"<{n} value>" for n in names}


@pytest.mark.parametrize("suite", ["dreamhouse", "bimedit", "example"])
def test_shipped_templates_render_as_str_format_did(suite: str) -> None:
    files = get_suite(suite).prompts
    assert files is not None and files.fields
    for name in files.names():
        text = files.read(name).strip()
        values = _sample(text, name)
        assert files.render(name, **values) == text.format(**values), name


def test_shipped_prompts_are_accepted_as_a_user_folder(tmp_path: Path) -> None:
    for suite in ("dreamhouse", "bimedit", "example"):
        files = get_suite(suite).prompts
        assert files is not None
        folder = tmp_path / suite
        folder.mkdir()
        for name in files.names():
            (folder / name).write_text(files.read(name))
        assert files.check_folder(folder) == folder.resolve()


@pytest.mark.parametrize(("line", "message"), [
    ("${common.__class__}", r"common.md:2: '\$\{common.__class__\}' is not a placeholder"),
    ("costs $5", r"common.md:2: '\$5' is not a placeholder"),
    ("$OPENAI_API_KEY", r"common.md:2: unknown placeholder \$OPENAI_API_KEY; the file it replaces has: \$catalogue"),
])
def test_a_dollar_template_field_is_refused_before_the_run(tmp_path: Path, line: str, message: str) -> None:
    # BuildArena's texts are string.Template texts: a bad field used to fail each episode at
    # substitute() ("Invalid placeholder in string: line 2, col 1"), naming no file
    own = get_suite("buildarena").prompts
    assert own is not None and own.dollar
    for name in own.names():  # the suite's own texts pass unchanged
        (tmp_path / name).write_text((own.folder / name).read_text())
    assert own.check_folder(tmp_path) == tmp_path.resolve()
    (tmp_path / "common.md").write_text(f"Blocks:\n{line}\n$catalogue $$ sign\n")
    with pytest.raises(ConfigError, match=message):
        own.check_folder(tmp_path)


def test_an_unknown_legoeval_placeholder_is_refused_before_the_run(tmp_path: Path) -> None:
    # it failed each episode with "no value for placeholder(s) ['SECRET_KEY']", naming no file
    own = get_suite("legoeval").prompts
    assert own is not None and own.marker is not None
    for name in own.names():
        (tmp_path / name).write_text((own.folder / name).read_text())
    assert own.check_folder(tmp_path) == tmp_path.resolve()
    (tmp_path / "plan.txt").write_text("Plan the checks.\n$SECRET_KEY$\n")
    with pytest.raises(ConfigError, match=r"plan.txt:2: unknown placeholder \$SECRET_KEY\$; the file it replaces"):
        own.check_folder(tmp_path)
