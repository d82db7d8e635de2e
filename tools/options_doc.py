"""Write the -o reference from each bundled suite's options class: docs/options.md, and the options
section of every suite README that holds the markers (``BEGIN`` … ``END``, the section between them).

    python tools/options_doc.py          # rewrite them
    python tools/options_doc.py --check  # exit 1 when a committed file differs (what the tests check)

A README's section is that suite's part of docs/options.md (its own options; the common ones it gives
its own default) and a link to the common model options there, so each option is described once.
"""

from __future__ import annotations

import sys
from pathlib import Path

from buildbench.cli.option_help import options_markdown

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "options.md"
SUITES = ROOT / "src" / "buildbench" / "suites"
BEGIN = "<!-- options: generated from the options class by tools/options_doc.py; do not edit by hand -->"
END = "<!-- /options -->"


def suite_sections(reference: str) -> dict[str, str]:
    """Each suite's part of the reference (``options_markdown()``): the lines under its heading,
    after its one-line description."""
    sections = {}
    for part in reference.split("\n## ")[1:]:
        name, _, body = part.partition("\n")
        sections[name] = body.strip("\n").split("\n\n", 1)[1]
    return sections


def readme_section(name: str, section: str, readme: Path) -> str:
    """What goes between the markers of suite ``name``'s README."""
    link = Path("/".join([".."] * len(readme.parent.relative_to(ROOT).parts))) / DOC.relative_to(ROOT)
    return (f"{BEGIN}\n\n{section}\n\nThe common model options (`max_tokens`, `timeout_s`, `max_retries`, …) are in\n"
            f"[docs/options.md]({link.as_posix()}#common-model-options); `buildbench run {name} --help` lists "
            f"both.\n\n{END}")


def with_section(text: str, generated: str, where: Path) -> str:
    """``text`` with what lies between its markers (markers included) replaced by ``generated``."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start or text.count(BEGIN) != 1 or text.count(END) != 1:
        raise ValueError(f"{where}: expected one {BEGIN!r} line followed by one {END!r} line")
    return text[:start] + generated + text[end + len(END):]


def expected_files() -> dict[Path, str]:
    """Every generated file and the text it must hold: docs/options.md and each marked README."""
    reference = options_markdown()
    sections = suite_sections(reference)
    out = {DOC: reference}
    for name, section in sections.items():
        readme = SUITES / name / "README.md"
        if readme.exists() and BEGIN in (text := readme.read_text(encoding="utf-8")):
            out[readme] = with_section(text, readme_section(name, section, readme), readme)
    return out


def main(argv: list[str]) -> int:
    try:
        expected = expected_files()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if "--check" in argv:
        stale = [path for path, text in expected.items()
                 if not path.exists() or path.read_text(encoding="utf-8") != text]
        for path in stale:
            print(f"error: {path} is not what the options classes say; run python tools/options_doc.py",
                  file=sys.stderr)
        return 1 if stale else 0
    for path, text in expected.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
