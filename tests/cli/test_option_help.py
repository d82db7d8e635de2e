"""The -o option help is generated from each suite's options class: `buildbench run SUITE --help`,
`buildbench SUITE --help` and docs/options.md (which must equal what the classes say)."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildbench.cli import main
from buildbench.cli.option_help import bundled_suites, options_markdown
from buildbench.harness import COMMON_OPTIONS, get_suite

DOC = Path(__file__).resolve().parents[2] / "docs" / "options.md"


def test_the_committed_options_doc_is_generated_from_the_options_classes() -> None:
    assert DOC.read_text(encoding="utf-8") == options_markdown(), \
        "docs/options.md is stale: run python tools/options_doc.py"


def test_the_doc_has_a_row_per_option_of_every_bundled_suite() -> None:
    text = options_markdown()
    for name in bundled_suites():
        for spec in get_suite(name).option_specs():
            assert f"| `{spec.name}` | {spec.describe().replace('|', chr(92) + '|')} |" in text, (name, spec.name)
    for spec in COMMON_OPTIONS:
        assert f"| `{spec.name}` |" in text


@pytest.mark.parametrize("args", [["run", "example", "--help"], ["run", "--split", "demo", "-o", "a=b", "example", "-h"]])
def test_run_suite_help_lists_the_suites_options_and_the_common_ones(args: list[str],
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Options of example (-o KEY=VALUE):" in out and "Common model options" in out
    for spec in (*get_suite("example").option_specs(), *COMMON_OPTIONS):
        assert f"{spec.name} {spec.describe()}" in out, spec.name


def test_run_help_without_a_suite_says_how_to_list_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    assert "`buildbench run SUITE --help` lists SUITE's -o options." in capsys.readouterr().out
    assert main(["run", "nosuch", "--help"]) == 0  # the help still shows, with the reason
    assert "the options of 'nosuch' cannot be listed: UnknownNameError" in " ".join(capsys.readouterr().out.split())


def test_a_suite_groups_help_ends_with_its_run_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dreamhouse", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "`buildbench run dreamhouse` takes these -o options" in out
    for spec in get_suite("dreamhouse").option_specs():
        assert f"{spec.name} {spec.describe()}" in out, spec.name
