"""Parameter types shared by every command group, the core commands and those a package adds
(``buildbench mcp``, ``buildbench scenes``, a suite's group). Outside the ``buildbench.cli`` package
and importing only click, the standard library and `buildbench.display`: a group's module imported first
(``buildbench.integrations.mcp_cli``) would otherwise load the CLI, which imports that group's
module back half-made.

Every path parameter of every command is a :class:`GivenPath` (the top-level group turns a
suite's plain ``click.Path`` into one when it loads the suite's group, `checked_paths`), so what
no reader can use is refused while the command line is parsed, naming the option and the path,
before anything is read or written: a FIFO (an ``open`` for reading blocks until a writer
comes), a device (``/dev/zero`` never ends), a socket, a symbolic-link loop, a link to nothing,
a path through a file, a name that is not UTF-8. What a reader refuses later (a file over its
byte cap, malformed content) is named by the reader; :func:`given_path_label` lets the CLI's
error handler add which option gave that path.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from typing import Any

import click

from buildbench.display import terminal_safe

#: ``(label, path, role, parameter)`` of each path the command being run (or the last one) was
#: given, for `given_path_label` and the input/output check; role is ``INPUT``, ``OUTPUT`` or
#: ``RUN``. Kept in the root context's ``meta`` (one list per invocation, so commands invoked one
#: after another in a process never see each other's) and here, for the error handler that runs
#: after the contexts have closed.
_META_KEY = "buildbench.given_paths"
INPUT, OUTPUT, RUN = "input", "output", "run folder"
_GIVEN: list[tuple[str, str, str, click.Parameter]] = []
#: What a run folder holds (`buildbench.harness.store.Store` and the runner write them): no
#: output may replace them.
RUN_FOLDER_FILES = ("run.sqlite", "run.sqlite-wal", "run.sqlite-shm", "run.yaml", "artifacts")

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class GivenPath(click.Path):
    """``click.Path`` that refuses what no command can use as a file or folder: an empty value
    (what an unset shell variable gives; as a path it is the current folder, so a run, figures
    or an export would land where the command happened to run), and the paths listed in the
    module docstring. A path that does not exist yet passes (an output, or an input whose reader
    says it is missing).

    ``output=True`` marks what the command writes: that must not be a run folder or one of a run
    folder's own files (`RUN_FOLDER_FILES`), nor a path the same command reads (an input given
    as another parameter), nor lie in a folder it reads: a command that lists or walks that
    folder (runs, task and scene folders) could read its own output or overwrite its inputs, and
    a later command reading the folder would find the output among them. A file written beside
    input files is fine. A suite's ``--out`` option is an output (`checked_paths`).

    ``run_folder=True`` marks the folder a run is stored in (``--run-dir``): read, to resume, so
    outputs are checked against it as against an input, and written, so it may not be, or lie in,
    a folder the command reads as another input: ``run --tasks FOLDER`` lists every ``.json`` and
    ``.jsonl`` under FOLDER, and a run stored there adds its own (``export``'s
    ``RUN/episodes.jsonl``, ``RUN/sft/``, artifacts) to the tasks of the next run or resume. An
    input inside the run folder is fine (``--config RUN/run.yaml``, as a resume gives it).

    An output folder may hold an input of the same command (``report runs/a --figures .``,
    ``scenerevis export out/chains.jsonl --out out``): what the command writes there cannot touch
    the input unless it writes under the input's own name. ``writes`` names (as globs) what the
    command writes in the folder, one level down, when it is known; an input under one of those
    names is refused (``scenerevis reverse out/images/x.json --out out``, whose images would be
    written among the input). Without ``writes`` nothing is checked that way: the outputs that need
    a new or empty folder (``view --static``, ``export --format sft``, ``scenes export``) refuse one
    holding an input themselves.

    ``reads`` names (as globs) all that the command reads in an input folder, one level down, when
    it reads only those: an output may then lie in the folder beside them (``export RUN --out
    RUN/mine.jsonl``, as its default RUN/episodes.jsonl does), but not be or lie in one of them.
    Without ``reads`` the whole folder counts as read.
    """

    def __init__(self, *args: Any, output: bool = False, run_folder: bool = False,
                 writes: tuple[str, ...] = (), reads: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.output = output
        self.run_folder = run_folder
        self.writes = writes
        self.reads = reads

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("an empty path; give a file or folder name", param, ctx)
        text = os.fspath(value) if isinstance(value, str | os.PathLike) else None
        if not isinstance(text, str) or (self.allow_dash and text == "-"):  # "-": standard input
            return super().convert(value, param, ctx)
        problem = _unusable(text, file_okay=self.file_okay, dir_okay=self.dir_okay)
        if problem:
            self.fail(f"{terminal_safe(text)}: {problem}", param, ctx)
        converted = super().convert(value, param, ctx)  # click's own checks (exists, file or folder)
        if param is not None:
            self._check_against_others(text, param, ctx)
        return converted

    def _check_against_others(self, text: str, param: click.Parameter, ctx: click.Context | None) -> None:
        global _GIVEN
        given = _GIVEN if ctx is None else ctx.find_root().meta.setdefault(_META_KEY, [])
        _GIVEN = given
        label = _label(param)
        role = OUTPUT if self.output else RUN if self.run_folder else INPUT
        if self.output:
            problem = _run_folder_part(text)
            if problem:
                self.fail(f"{terminal_safe(text)}: {problem}; write somewhere else", param, ctx)
        for other_label, other, other_role, other_param in given:
            if other_label == label or other_role == role:
                continue
            if OUTPUT in (role, other_role):  # an output against what the command reads (a run folder too)
                if _same(text, other):
                    what = "writes; write the output" if other_role == OUTPUT else "reads; write"
                    self.fail(f"{terminal_safe(text)}: the same path as {other_label}, which this command {what} "
                              "somewhere else", param, ctx)
                # The output's fault, whichever click checks first (it checks arguments after options).
                written, read, read_label, output_param, read_param = \
                    (text, other, other_label, param, other_param) if self.output else \
                    (other, text, label, other_param, param)
                part = _read_part(written, read, getattr(read_param.type, "reads", ()))
                if part == "":
                    self.fail(f"{terminal_safe(written)}: lies in {terminal_safe(read)}, the folder given as {read_label}, "
                              "which this command reads; write the output outside it", output_param, ctx)
                if part:
                    self.fail(f"{terminal_safe(written)}: lies in {terminal_safe(os.path.join(read, part))}, which this "
                              f"command reads (in {terminal_safe(read)}, given as {read_label}); write the output beside "
                              "it or outside the folder", output_param, ctx)
                writes = getattr(output_param.type, "writes", ())
                name = _written_over(written, writes, read)
                if name:
                    holds = "the path of" if _same(os.path.join(written, name), read) else "which holds"
                    self.fail(f"{terminal_safe(written)}: this command writes {terminal_safe(name)} in it, {holds} "
                              f"{terminal_safe(read)}, given as {read_label}; write the output somewhere else",
                              output_param, ctx)
            else:  # a run folder against an input: the run folder's fault
                run, read, read_label, run_param = (text, other, other_label, param) if role == RUN else \
                    (other, text, label, other_param)
                problem = run_folder_in_input(run, read, read_label)
                if problem:
                    self.fail(problem, run_param, ctx)
        given.append((label, text, role, param))


def run_folder_in_input(run_dir: str | os.PathLike[str], read: str | os.PathLike[str], read_label: str) -> str | None:
    """Why a run may not be stored in ``run_dir``, given the input ``read`` (named ``read_label``)
    of the same command, else None: ``run_dir`` is that folder or lies in it (links followed)."""
    run, folder = os.fspath(run_dir), os.fspath(read)
    if not os.path.isdir(folder):
        return None
    if _same(run, folder):
        where = f"is the folder given as {read_label}"
    elif _inside(run, folder):
        where = f"lies in {terminal_safe(folder)}, the folder given as {read_label}"
    else:
        return None
    return (f"{terminal_safe(run)}: {where}, which this command reads (a run stored there would add its own "
            "files to what it reads); store the run outside it")


def _label(param: click.Parameter) -> str:
    if isinstance(param, click.Option):
        return f"option {max(param.opts, key=len)}"
    return f"argument {param.human_readable_name}"


def _unusable(path: str, *, file_okay: bool, dir_okay: bool) -> str | None:
    """Why ``path`` can be neither read nor written as a file or folder, else None."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # bytes the file system allows, but a run's records and IFC/JSON libraries cannot hold
        return "the name holds bytes that are not UTF-8 text; rename it"
    try:
        info = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a loop of symbolic links"
        if exc.errno == errno.ENOENT and os.path.islink(path):
            return f"a symbolic link to {os.readlink(path)}, which does not exist"
        if exc.errno == errno.ENOENT:
            return None  # not there yet: an output, or the reader says it is missing
        if exc.errno == errno.ENOTDIR:
            return f"{_file_on_the_way(path)} is not a folder"
        return exc.strerror or str(exc)  # ENAMETOOLONG, EACCES, ...
    kind = next((name for test, name in _KINDS if test(info.st_mode)), None)
    if kind is None:
        return None
    wanted = "a regular file or a folder" if file_okay and dir_okay else "a regular file" if file_okay else "a folder"
    return f"is {kind}, not {wanted}"


def _run_folder_part(path: str) -> str | None:
    """Why writing ``path`` would damage a stored run, else None."""
    absolute = os.path.abspath(path)
    if os.path.isfile(os.path.join(absolute, RUN_FOLDER_FILES[0])):
        return "is a run folder"
    folder, name = os.path.split(absolute)
    if name in RUN_FOLDER_FILES and os.path.isfile(os.path.join(folder, RUN_FOLDER_FILES[0])):
        return f"is the run's own {name} in the run folder {folder}"
    return None


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one is not there yet: the same when they name the same place
        return os.path.abspath(a) == os.path.abspath(b)


def _inside(path: str, folder: str) -> bool:
    """Whether ``path`` (there or not yet) is ``folder``, an existing folder, or lies in it, links
    followed."""
    if not os.path.isdir(folder):
        return False
    real = os.path.realpath(folder)
    return os.path.commonpath([os.path.realpath(path), real]) == real


def _read_part(path: str, folder: str, reads: tuple[str, ...]) -> str | None:
    """Where ``path`` (an output) lies in what the command reads of ``folder``: "" for the folder
    as a whole (no ``reads`` given), the name among the globs ``reads`` it is or lies in, else
    None (not in the folder, or beside what is read). Links followed."""
    if not _inside(path, folder):
        return None
    if not reads:
        return ""
    first = os.path.relpath(os.path.realpath(path), os.path.realpath(folder)).split(os.sep, 1)[0]
    if first == os.curdir:
        return ""
    return first if any(fnmatch.fnmatchcase(first, name) for name in reads) else None


def _written_over(folder: str, writes: tuple[str, ...], path: str) -> str | None:
    """The name (among the globs ``writes``) a command writing into ``folder`` gives what
    ``path`` is or lies in, else None. Links followed; ``folder`` itself is no such name."""
    if not writes or not os.path.isdir(folder) or not _inside(path, folder):
        return None
    relative = os.path.relpath(os.path.realpath(path), os.path.realpath(folder))
    first = relative.split(os.sep, 1)[0]
    if first in (os.curdir, os.pardir):
        return None
    return next((first for name in writes if fnmatch.fnmatchcase(first, name)), None)


def _file_on_the_way(path: str) -> str:
    """The first folder named in ``path`` that is something else (``path`` failed with ENOTDIR)."""
    parent = os.path.dirname(path)
    while parent and parent != os.path.dirname(parent) and not os.path.exists(parent):
        parent = os.path.dirname(parent)
    return parent or path


def checked_paths(command: click.Command) -> click.Command:
    """``command`` (and, for a group, every command under it) with each plain ``click.Path``
    parameter turned into a `GivenPath` of the same settings (``--out`` an output, ``--run-dir``
    a run folder); returns ``command``."""
    for param in command.params:
        if type(param.type) is click.Path:
            old = param.type
            param.type = GivenPath(exists=old.exists, file_okay=old.file_okay, dir_okay=old.dir_okay,
                                   writable=old.writable, readable=old.readable, resolve_path=old.resolve_path,
                                   allow_dash=old.allow_dash, path_type=old.type, executable=old.executable,
                                   output=isinstance(param, click.Option) and "--out" in param.opts,
                                   run_folder=isinstance(param, click.Option) and "--run-dir" in param.opts)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            checked_paths(sub)
    return command


def forget_given_paths() -> None:
    """Start a new command: forget the paths the last one was given."""
    global _GIVEN
    _GIVEN = []


def given_path_label(filename: str) -> str | None:
    """The label (``option --machine``, ``argument FILE``) of the path given on the command line
    that ``filename`` is or lies in (as typed or made absolute; the longest when several are), or None."""
    best: tuple[int, str] | None = None
    for label, given, *_ in _GIVEN:
        for form in {given, os.path.abspath(given)}:
            hit = filename == form or filename.startswith(form.rstrip(os.sep) + os.sep)
            if hit and (best is None or len(form) > best[0]):
                best = (len(form), label)
    return best[1] if best else None


def with_path_label(message: str, *, arguments: bool = True) -> str:
    """``message`` (a reader's error, which names a file but not where it came from) with the
    label of the given path it names, or names a file in, added as `given_path_label` gives it:
    ``/data/tasks/x.jsonl:3: ...`` becomes ``... (option --tasks)``. Unchanged when it names no
    given path or already names the option; ``arguments=False``: also when the path is an
    argument's (a command's errors about its own positional file need no label)."""
    best: tuple[int, str] | None = None
    for label, given, *_ in _GIVEN:
        if not arguments and not label.startswith("option "):
            continue
        for form in {given, os.path.abspath(given)}:
            # the path itself, or a file in it: followed by a separator, a line number, a space, the end
            found = re.search(r"(?<![\w./~-])" + re.escape(form.rstrip(os.sep) or os.sep) + r"(?=$|[/:\s)\]\[,'\"])",
                              message)
            if found and (best is None or len(form) > best[0]):
                best = (len(form), label)
    if best is None:
        return message
    option = best[1].removeprefix("option ")
    return message if option in message else f"{message} ({best[1]})"
