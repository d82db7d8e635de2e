"""What README.md and docs/*.md name must exist: every `buildbench` command line they show
names real (sub)commands and only options those commands have, and every repository path
they name (`src/…`, `examples/…`, a relative link; in a package README also a path from its
own folder) is there. The package READMEs (suites, scenes) are read the same way. A renamed option or moved file
fails here instead of in a newcomer's shell. (Running the commands is `make demo`'s and the
suites' own tests' job; the Python blocks run in test_readme_snippets.py.)
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from buildbench.cli import cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "src" / "buildbench").glob("**/README.md"))]
#: Folders a path written from the repository root starts with.
TOP = ("src/", "tests/", "examples/", "docs/", "tools/", "benchmarks/")


def _command_lines(text: str) -> list[str]:
    """The arguments after `buildbench` of each command shown: lines of sh/plain code blocks
    and inline code spans, split at `&&` and `|`, comments dropped."""
    lines: list[str] = []
    block: str | None = None
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("```"):
            block = None if block is not None else line[3:].strip()
        elif block is not None:
            if block in ("", "sh"):
                lines.append(line)
        else:
            lines += re.findall(r"`([^`]*buildbench [^`]*)`", line)
    out = []
    for line in lines:
        for part in re.split(r"&&|\|", line.split(" #")[0]):
            found = re.search(r"(?:^|\s)(?:\S*/)?buildbench\s+(.*)", part)
            if found:
                out.append(found.group(1).strip())
    return out


def _placeholder(token: str) -> bool:
    """SUITE, RUN_DIR, <suite>, … stand for what the reader fills in."""
    return token.isupper() or token.startswith("<") or "…" in token


def _problems(args: str) -> list[str]:
    try:
        tokens = shlex.split(args.replace("[", " ").replace("]", " "))
    except ValueError:
        tokens = args.replace("[", " ").replace("]", " ").split()
    cmd: click.Command = cli
    path = ["buildbench"]
    problems = []
    for token in tokens:
        if token.startswith(">"):
            break
        if token.startswith("-") and token != "-":
            name = token.split("=")[0]
            known = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"--help", "-h"}
            if name not in known:
                problems.append(f"{' '.join(path)}: no option {name}")
        elif isinstance(cmd, click.Group):
            if "/" in token and all(cmd.get_command(click.Context(cmd), t) for t in token.split("/")):
                break  # `replay/simulate/…`: several subcommands named at once
            sub = cmd.get_command(click.Context(cmd), token)
            if sub is None:
                if not _placeholder(token):
                    problems.append(f"{' '.join(path)}: no command {token!r}")
                break
            cmd = sub
            path.append(token)
    return problems


CASES = [(str(doc.relative_to(ROOT)), args) for doc in DOCS for args in _command_lines(doc.read_text(encoding="utf-8"))]


def test_the_docs_show_commands() -> None:
    assert len(CASES) > 50


@pytest.mark.parametrize(("doc", "args"), CASES, ids=[f"{d}:{a[:40]}" for d, a in CASES])
def test_a_command_shown_has_its_subcommands_and_options(doc: str, args: str) -> None:
    assert _problems(args) == [], f"{doc}: buildbench {args}"


def test_a_check_that_can_fail() -> None:
    assert _problems("run example --no-such-flag") == ["buildbench run: no option --no-such-flag"]
    assert _problems("dreamhouse frobnicate x") == ["buildbench dreamhouse: no command 'frobnicate'"]


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_every_path_named_exists(doc: str | Path) -> None:
    text = Path(doc).read_text(encoding="utf-8")
    named = {p for p in re.findall(r"`([^`\s]+)`", text) if p.startswith(TOP)}
    named |= {p for p in re.findall(r"\]\(([^)#\s]+)\)", text) if "://" not in p}
    missing = []
    for p in sorted(named):
        target = re.sub(r"<[^>]*>", "*", p.split(":")[0].rstrip("/"))
        if not any(list(base.glob(target)) if "*" in target else (base / target).exists()
                   for base in (ROOT, Path(doc).parent)):
            missing.append(p)
    assert missing == [], f"{Path(doc).name} names paths that are not in the repository"
