"""The CLI's last line of defence: errors no reader bounded itself still come out as one line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from buildbench.cli.main import _strict_json, main
from buildbench.harness.options import LARGEST_INT, OptionSpec
from buildbench.harness.report import paper_table


def _fail_with(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    def get_suite(name: str) -> None:
        raise exc

    monkeypatch.setattr("buildbench.harness.get_suite", get_suite)


def test_undecodable_input_is_a_usage_error(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    # UnicodeDecodeError is a ValueError: it must not fall through to "unexpected" (exit 1).
    _fail_with(monkeypatch, UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"))
    assert main(["tasks", "example"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: input is not UTF-8 text (UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: "
        "invalid start byte)"]


def test_unreadable_path_is_named(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _fail_with(monkeypatch, IsADirectoryError(21, "Is a directory", "/tmp/some/folder"))
    assert main(["tasks", "example"]) == 2
    assert capsys.readouterr().err.splitlines() == ["error: /tmp/some/folder: Is a directory"]


def test_oserror_without_a_path_stays_unexpected(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _fail_with(monkeypatch, ConnectionResetError(104, "Connection reset by peer"))
    assert main(["tasks", "example"]) == 1
    assert capsys.readouterr().err.startswith("error: ConnectionResetError: ")


def test_option_bounds_and_description() -> None:
    spec = OptionSpec("n", "int", "things per episode", minimum=1)
    assert spec.parse(LARGEST_INT) == LARGEST_INT
    with pytest.raises(Exception, match=r"option n=\d+: too large"):
        spec.parse(LARGEST_INT + 1)
    assert spec.describe() == "int >= 1: things per episode (default none)"
    assert OptionSpec("f", "str", choices=("a", "b"), default="a").describe() == "a | b (default a)"
    assert OptionSpec("h", "int-or-full", maximum=5).describe() == "int or 'full' <= 5 (default full)"


def _render(rows: list[dict[str, object]]) -> list[str]:
    table, width = paper_table("t", rows)
    out = io.StringIO()
    Console(file=out, width=max(100, width)).print(table)
    return out.getvalue().splitlines()


def testpaper_table_fits_100_columns_by_wrapping_prose() -> None:
    rows = [{"source": f"paper: a long method name number {i}", "n": 324, "final score": 49.48 + i,
             "judge": "rule judge: not comparable with the paper's GPT-5 judge"} for i in range(3)]
    lines = _render(rows)
    assert max(map(len, lines)) <= 100
    assert "…" not in "".join(lines)
    assert sum("49.480" in line for line in lines) == 1


def test_widepaper_table_is_printed_wider_never_cut() -> None:
    rows = [{f"metric number {k}": 1000.123456 + k for k in range(12)} | {"method": "deterministic"}]
    lines = _render(rows)
    text = "".join(lines)
    assert "…" not in text and max(map(len, lines)) > 100
    assert all(f"{1000.123456 + k:.3f}" in text for k in range(12))


def test_report_json_is_standard_json() -> None:
    # A table cell without data (bimedit's spatial rate of a run with no spatial task) is NaN.
    data = {"tables": {"t": [{"spatial": float("nan"), "n": 1}]}, "metrics": (float("inf"), 0.5), "p": Path("r")}
    assert _strict_json(data) == '{"tables": {"t": [{"spatial": null, "n": 1}]}, "metrics": [null, 0.5], "p": "r"}'


def test_mcp_refuses_an_empty_token_typed_but_not_an_empty_variable(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from buildbench.integrations.mcp_cli import mcp

    assert main(["mcp", "example", "--transport", "http", "--token", ""]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Invalid value for '--token': an empty token (an unset shell variable?)" in err
    monkeypatch.setenv("BUILDBENCH_MCP_TOKEN", "")
    ctx = mcp.make_context("mcp", ["example"])  # parsed as the command line gives it, not run
    assert ctx.params["token"] is None
