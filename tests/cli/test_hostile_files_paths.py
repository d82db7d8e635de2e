"""Every path parameter of every command (core, ``scenes``, ``mcp`` and each suite's group, found
by walking the CLI) given a path no command can use: one ``error:`` line naming the parameter and
the path, exit status 2, nothing read or written.

The cases run in one child process (``python THIS_FILE FOLDER``, the CLI's ``main`` called once
per case) under a timeout: a FIFO opened for reading blocks until a writer comes, so a command
that opened one would hang the child, never the test suite.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

# The child walks every command once per module: its tests on one worker, not the walk made on both.
pytestmark = pytest.mark.xdist_group("cli-hostile-paths")

#: Case -> (the path, given the folder of fixtures, and what the error line says). ``KIND`` is a
#: folder for a file parameter, a file for a folder parameter.
CASES: dict[str, tuple[str, str]] = {
    "fifo": ("{T}/fifo", "is a FIFO (named pipe), not a"),
    "device": ("/dev/zero", "is a character device, not a"),
    "symlink loop": ("{T}/loop", "a loop of symbolic links"),
    "dangling symlink": ("{T}/dangling", "a symbolic link to {T}/nothere, which does not exist"),
    "through a file": ("{T}/file/inside.json", "{T}/file is not a folder"),
    "name not UTF-8": ("{T}/\udcff\udcfe.json", "the name holds bytes that are not UTF-8 text"),
    "newline in the name": ("{T}/new\nline", "is a FIFO (named pipe), not a"),
    "wrong kind": ("KIND", "is a"),
}
#: Cases for outputs only: a stored run's own files; a path in a folder the command reads (its
#: first input that may be a folder, given ``{T}/folder``; ``{IN}`` its label; in what it reads
#: there when it reads only some names, `GivenPath.reads`).
OUTPUT_CASES: dict[str, tuple[str, str]] = {
    "a run's file": ("{T}/run/run.sqlite", "is the run's own run.sqlite in the run folder {T}/run"),
    "a run folder": ("{T}/run", "is a run folder"),
    "in an input folder": ("{T}/folder/sub", "{T}/folder/sub: lies in {T}/folder, the folder given as {IN}"),
}


def _path_parameters() -> list[tuple[list[str], click.Command, click.Parameter]]:
    from buildbench.cli.main import cli

    found: list[tuple[list[str], click.Command, click.Parameter]] = []

    def walk(command: click.Command, names: list[str]) -> None:
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None:
                    walk(sub, [*names, name])
            return
        found.extend((names, command, p) for p in command.params if isinstance(p.type, click.Path))

    walk(cli, [])
    return found


def _argv(names: list[str], command: click.Command, param: click.Parameter, value: str,
          first: tuple[click.Parameter, str] | None = None) -> list[str]:
    """``param`` given ``value``, and ``first`` (another parameter and its value) if given."""
    given = dict([first, (param, value)] if first else [(param, value)])
    options = [a for p, v in given.items() if isinstance(p, click.Option) for a in (max(p.opts, key=len), v)]
    last = max((i for i, p in enumerate(command.params) if p in given and isinstance(p, click.Argument)), default=-1)
    # Arguments are positional: each one up to the last given; absent paths pass the parser, the readers never run.
    arguments = [given.get(p) or (f"absent-{p.name}" if isinstance(p.type, click.Path) else "example")
                 for p in command.params[:last + 1] if isinstance(p, click.Argument)]
    return [*names, *arguments, *options]


def _label(param: click.Parameter) -> str:
    return f"'{max(param.opts, key=len)}'" if isinstance(param, click.Option) else f"'{param.human_readable_name}"


def _make_fixtures(folder: Path) -> None:
    os.mkfifo(folder / "fifo")
    os.mkfifo(folder / "new\nline")
    os.symlink(folder / "loop", folder / "loop")
    os.symlink(folder / "nothere", folder / "dangling")
    (folder / "file").write_text("{}")
    (folder / "folder").mkdir()
    (folder / "run").mkdir()
    (folder / "run" / "artifacts").mkdir(parents=True)
    (folder / "run" / "run.sqlite").write_bytes(b"a stored run")


def _drive(folder: Path) -> None:
    """In the child: every case for every path parameter, one JSON line each."""
    from buildbench.cli.main import main
    from buildbench.cliargs import GivenPath

    os.chdir(folder)
    for names, command, param in _path_parameters():
        assert isinstance(param.type, GivenPath)
        cases = {**CASES, **(OUTPUT_CASES if param.type.output else {})}
        for case, (template, expected) in cases.items():
            if template == "KIND":
                if param.type.file_okay == param.type.dir_okay:
                    continue
                template, expected = ("{T}/folder", "is a directory") if param.type.file_okay else \
                    ("{T}/file", "is a file")
            if case == "a run folder" and not param.type.dir_okay:
                continue  # a folder for a file output is the case "wrong kind"
            if case == "a run's file" and not param.type.file_okay:
                template, expected = "{T}/run/artifacts", "is the run's own artifacts in the run folder {T}/run"
            first = None
            if case == "in an input folder":
                read = next((p for p in command.params if isinstance(p.type, GivenPath) and not p.type.output
                             and p.type.dir_okay), None)
                if read is None:
                    continue
                first = (read, str(folder / "folder"))
                if read.type.reads:  # it reads only these names in the folder: an output beside them is fine
                    template = "{T}/folder/" + read.type.reads[-1] + "/sub"
                    expected = ("{T}/folder/" + read.type.reads[-1] + "/sub: lies in {T}/folder/" + read.type.reads[-1]
                                + ", which this command reads (in {T}/folder, given as {IN})")
                expected = expected.replace("{IN}", f"option {max(read.opts, key=len)}" if isinstance(read, click.Option)
                                            else f"argument {read.human_readable_name}")
            value = template.format(T=folder)
            argv = _argv(names, command, param, value, first)
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    rc: Any = main(argv)
                except BaseException as exc:  # noqa: BLE001 - reported to the test, which fails on it
                    rc = f"raised {type(exc).__name__}: {exc}"
            print(json.dumps({"command": " ".join(names), "param": _label(param), "case": case, "argv": argv,
                              "value": value, "expected": expected.format(T=folder), "rc": rc,
                              "stderr": err.getvalue()}), flush=True)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("hostile-paths")
    _make_fixtures(folder)
    before = sorted(p.name for p in folder.iterdir())
    child = subprocess.run([sys.executable, __file__, str(folder)], capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    assert sorted(p.name for p in folder.iterdir()) == before, "a case wrote into the fixtures' folder"
    assert (folder / "run" / "run.sqlite").read_bytes() == b"a stored run"
    assert sorted(os.listdir(folder / "run")) == ["artifacts", "run.sqlite"] and not os.listdir(folder / "run" / "artifacts")
    assert not os.listdir(folder / "folder")
    return [json.loads(line) for line in child.stdout.splitlines()]


def test_every_path_parameter_is_checked_as_one(outcomes: list[dict[str, Any]]) -> None:
    params = {(o["command"], o["param"]) for o in outcomes}
    # The walk reached every group: a command of each, and the suites' outputs marked as such.
    commands = {c for c, _ in params}
    assert {"run", "report", "export", "view", "compare", "mcp", "scenes convert", "bimedit score",
            "buildarena simulate", "dreamhouse validate", "legoeval generate", "scenerevis apply"} <= commands
    assert len(params) >= 60, sorted(params)
    outputs = {(o["command"], o["param"]) for o in outcomes if o["case"] == "a run's file"}
    assert {("export", "'--out'"), ("report", "'--figures'"), ("view", "'--static'"), ("run", "'--record'"),
            ("scenerevis render", "'--out'"), ("dreamhouse pack", "'--out'")} <= outputs
    # Each output of a command that reads a folder was tried in that folder.
    nested = {(o["command"], o["param"]) for o in outcomes if o["case"] == "in an input folder"}
    assert {("export", "'--out'"), ("report", "'--figures'"), ("view", "'--static'"), ("run", "'--record'"),
            ("dreamhouse unpack", "'--out'"), ("dreamhouse pack", "'--out'"), ("scenerevis reverse", "'--out'"),
            ("scenerevis goals", "'--out'")} <= nested


@pytest.mark.parametrize("case", [*CASES, *OUTPUT_CASES])
def test_an_unusable_path_is_one_error_line_naming_parameter_and_path(
        case: str, outcomes: list[dict[str, Any]]) -> None:
    from buildbench.display import terminal_safe

    mine = [o for o in outcomes if o["case"] == case]
    assert mine
    wrong = []
    for o in mine:
        lines = o["stderr"].splitlines()
        ok = (o["rc"] == 2 and len(lines) == 1 and lines[0].startswith("error: ") and o["param"] in lines[0]
              and terminal_safe(o["value"]) in lines[0] and terminal_safe(o["expected"]) in lines[0])
        if not ok:
            wrong.append(f"{o['argv']}: rc={o['rc']} {o['stderr']!r}")
    assert not wrong, "\n".join(wrong)


def test_an_output_that_is_an_input_of_the_same_command_is_refused(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from buildbench.cli.main import main

    scene = tmp_path / "scene.json"
    scene.write_text('{"room": 1}')
    assert main(["scenerevis", "apply", str(scene), str(tmp_path / "reply.txt"), "--out", str(scene)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{scene}: the same path as" in err and "somewhere else" in err, err
    assert scene.read_text() == '{"room": 1}'


def test_an_output_in_a_folder_the_command_reads_is_refused_either_way_round(tmp_path: Path) -> None:
    from buildbench.cliargs import GivenPath, forget_given_paths

    @click.command()
    @click.argument("inputs", nargs=-1, type=GivenPath())
    @click.option("--out", type=GivenPath(output=True))
    def command(inputs: tuple[str, ...], out: str | None) -> None:
        """Reads its inputs, writes --out."""

    folder = tmp_path / "in"
    (folder / "deep").mkdir(parents=True)
    (folder / "a.json").write_text("{}")
    os.symlink(folder, tmp_path / "link")

    def refusal(argv: list[str]) -> str | None:
        forget_given_paths()
        try:
            command.main(argv, standalone_mode=False)
        except click.BadParameter as exc:
            return exc.format_message()
        return None

    # Beside an input file, or outside the folder: fine.
    assert refusal([str(folder / "a.json"), "--out", str(folder / "b.json")]) is None
    assert refusal([str(folder), "--out", str(tmp_path / "in-sibling" / "x")]) is None
    # In the folder, deeper, through a link to it, the output first: refused naming both parameters, the
    # output's fault.
    for read, written, argv in ((folder, folder / "deep" / "new" / "x", [str(folder), "--out", "{W}"]),
                                (tmp_path / "link", folder / "sub", [str(tmp_path / "link"), "--out", "{W}"]),
                                (folder, tmp_path / "link" / "sub", [str(folder), "--out", "{W}"]),
                                (folder, folder / "sub", ["--out", "{W}", str(tmp_path / "other.json"), str(folder)])):
        message = str(refusal([str(written) if a == "{W}" else a for a in argv]))
        assert message.startswith("Invalid value for '--out'") and \
            f"{written}: lies in {read}, the folder given as argument INPUTS, which this command reads" in message
    assert not os.listdir(folder / "deep")


def test_a_readers_error_names_the_option_that_gave_the_path(tmp_path: Path) -> None:
    from buildbench.cliargs import GivenPath, forget_given_paths, given_path_label

    @click.command()
    @click.argument("folder", type=GivenPath(file_okay=False))
    @click.option("--out", type=GivenPath(output=True))
    def command(folder: str, out: str | None) -> None:
        """What a command is given, recorded as it is parsed."""

    forget_given_paths()
    command.main([str(tmp_path), "--out", "result.json"], standalone_mode=False)
    # A file inside the folder, the output as typed or made absolute; the longest match wins.
    assert given_path_label(str(tmp_path / "inside" / "x.json")) == "argument FOLDER"
    assert given_path_label(os.path.abspath("result.json")) == "option --out"
    assert given_path_label(str(tmp_path) + "-other") is None
    forget_given_paths()
    assert given_path_label(str(tmp_path)) is None


if __name__ == "__main__":
    _drive(Path(sys.argv[1]))
