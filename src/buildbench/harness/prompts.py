"""Replaceable prompt texts (``-o prompts=DIR``).

Each suite keeps its prompt texts as files in its package and reads them through a
:class:`PromptFiles`. With ``-o prompts=DIR`` a user's files of the same names replace them
for that run — the originals' released prompts, say, to make numbers comparable with a
paper; a name the folder lacks falls back to the suite's own file, and a file whose name the
suite does not know is refused before the run starts (a typo would otherwise be ignored).

Prompt files are shared between people, so they are data, never code: a suite whose texts
have ``{name}`` placeholders (``PromptFiles(fields=True)``) fills them with :meth:`PromptFiles.render`,
which allows only plain names, each one the suite provides (those of the file it replaces),
``{{``/``}}`` for literal braces and, for numbers, a short numeric format (``{score:.3f}``).
``str.format`` would also evaluate ``{model_path.with_name.__globals__[os].environ[KEY]}``;
here any other field is refused with ``error:`` naming the file and line, before the run.

The folder in force is a context variable the runner sets around each episode, so code deep
in an env or a pipeline reads the right text without passing the option along, and two runs
in one process (or concurrent episodes) cannot see each other's folder.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from string import Template

from buildbench.inputs import read_text

from .errors import ConfigError
from .options import OptionSpec

#: The user's prompt folder of the running episode, or None for the suites' own texts.
PROMPT_DIR: ContextVar[Path | None] = ContextVar("buildbench_prompt_dir", default=None)

#: The option every suite with prompt files declares.
PROMPTS_OPTION = OptionSpec("prompts", "str", "folder of prompt files replacing the suite's own (same file names)",
                            path="input")

# Prompt files are small; a bigger file is a wrong path, not a prompt.
MAX_PROMPT_BYTES = 1024 * 1024

# A placeholder: a plain name with an optional short numeric format; anything else between
# braces is refused (attribute or index walks, conversions, nested or wide formats).
_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)(?::([<>^=]?[+ -]?0?[0-9]{0,3}(?:\.[0-9]{1,2})?[dfgeE%]?))?\}"
                    r"|\{[^{}\n]{0,60}\}?|\}")
Values = Mapping[str, object]


class PromptTemplateError(ConfigError):
    """A prompt file with a field that is not a plain placeholder the suite provides."""


def placeholders(text: str, where: str) -> list[str]:
    """The placeholder names of template ``text`` in order, or PromptTemplateError naming the
    line (``where`` is the file) of the first field that is not a plain name."""
    names = []
    for match in _TOKEN.finditer(text):
        if match.group(0) in ("{{", "}}"):
            continue
        if match.group(1) is None:
            line = text.count("\n", 0, match.start()) + 1
            raise PromptTemplateError(f"{where}:{line}: {match.group(0)!r} is not a placeholder; prompt files allow "
                                      "only {name} (a plain name), {name:.2f} for numbers and {{ }} for braces")
        names.append(match.group(1))
    return names


def fill(text: str, values: Values, where: str) -> str:
    """Template ``text`` with its placeholders replaced by ``values`` (see the module docstring)."""
    placeholders(text, where)  # refuses any other field first, whatever values there are

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        name, spec = match.group(1), match.group(2)
        if name not in values:
            line = text.count("\n", 0, match.start()) + 1
            raise PromptTemplateError(f"{where}:{line}: unknown placeholder {{{name}}}; this text has: "
                                      f"{', '.join(sorted(values)) or '(none)'}")
        value = values[name]
        if spec:
            if isinstance(value, bool) or not isinstance(value, int | float):
                line = text.count("\n", 0, match.start()) + 1
                raise PromptTemplateError(f"{where}:{line}: {{{name}:{spec}}} formats a number, "
                                          f"but {name} is text")
            return format(value, spec)
        return str(value)

    return _TOKEN.sub(one, text)


@dataclass(frozen=True)
class PromptFiles:
    """The prompt texts of one suite: files with ``suffixes`` in ``folder``.

    Attributes:
        folder: The suite's own prompt folder (inside its package).
        suffixes: File endings that are prompts (``.md``, ``.txt``); other files there
            (``__init__.py``) are not.
        fields: The texts have ``{name}`` placeholders filled by :meth:`render`; a user's
            replacement is checked to use only plain names of the file it replaces.
        dollar: The texts are ``string.Template`` texts (``$name``): a user's replacement is
            checked before the run to use only ``$name``/``${name}`` of the file it replaces
            and ``$$`` (the suite's ``substitute`` would fail mid-episode, naming no file).
        marker: For texts with their own placeholder syntax (LEGO-Eval's ``$NAME$``), a regular
            expression whose group 1 is a placeholder's name: a user's replacement is checked
            before the run to use only the names of the file it replaces.
    """

    folder: Path
    suffixes: tuple[str, ...] = (".md",)
    fields: bool = False
    dollar: bool = False
    marker: str | None = None

    def names(self) -> list[str]:
        """The file names a user folder may replace, sorted."""
        return sorted(p.name for p in self.folder.iterdir() if p.is_file() and p.suffix in self.suffixes)

    def path(self, name: str) -> Path:
        """Where the text ``name`` (a file name such as ``system.md``) is read from now."""
        override = PROMPT_DIR.get()
        if override is not None and (override / name).is_file():
            return override / name
        own = self.folder / name
        if not own.is_file():
            raise KeyError(f"no prompt file {name!r} in {self.folder} (known: {', '.join(self.names())})")
        return own

    def read(self, name: str) -> str:
        """The text of ``name``: the user's file when the run's prompt folder has one, else ours."""
        path = self.path(name)
        try:
            return read_text(path, max_bytes=MAX_PROMPT_BYTES)
        except OSError as exc:
            raise ConfigError(f"{path}: {exc.strerror or exc}") from None

    def render(self, name: str, **values: object) -> str:
        """The text of ``name`` (stripped) with its placeholders filled from ``values``.

        Raises:
            PromptTemplateError: A field that is not a plain name, or a name ``values`` lacks.
        """
        return fill(self.read(name).strip(), values, str(self.path(name)))

    def check_folder(self, folder: str | Path) -> Path:
        """``folder`` resolved, or ConfigError naming the first file that replaces nothing."""
        path = Path(folder).expanduser()
        if not path.is_dir():
            raise ConfigError(f"option prompts={str(folder)!r}: not a folder")
        known = set(self.names())
        for item in sorted(path.iterdir()):
            if item.name.startswith("."):
                continue  # editor and OS droppings (.DS_Store, .swp)
            if item.name not in known:
                raise ConfigError(f"option prompts={str(folder)!r}: {item.name!r} is not a prompt file of this "
                                  f"suite; files: {', '.join(sorted(known))}")
            if not item.is_file():
                raise ConfigError(f"option prompts={str(folder)!r}: {item.name!r} is not a regular file")
            try:
                text = read_text(item, max_bytes=MAX_PROMPT_BYTES)
            except OSError as exc:
                raise ConfigError(f"option prompts={str(folder)!r}: {exc.strerror or exc}") from None
            if self.fields:
                self._check_fields(item, text)
            if self.dollar:
                self._check_dollar(item, text)
            if self.marker is not None:
                self._check_marker(item, text, re.compile(self.marker))
        return path.resolve()

    def _check_marker(self, item: Path, text: str, marker: re.Pattern[str]) -> None:
        allowed = set(marker.findall(read_text(self.folder / item.name, max_bytes=MAX_PROMPT_BYTES)))
        for match in marker.finditer(text):
            if match.group(1) not in allowed:
                line = text.count("\n", 0, match.start()) + 1
                raise PromptTemplateError(f"{item}:{line}: unknown placeholder {match.group(0)}; the file it "
                                          f"replaces has: {', '.join(sorted(allowed)) or '(none)'}")

    def _check_dollar(self, item: Path, text: str) -> None:
        allowed = set(Template(read_text(self.folder / item.name, max_bytes=MAX_PROMPT_BYTES)).get_identifiers())
        for match in Template.pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            if match.group("invalid") is not None:
                bad = text[match.start():].split("\n", 1)[0][:40]
                raise PromptTemplateError(f"{item}:{line}: {bad!r} is not a placeholder; this prompt file allows "
                                          "only $name or ${name} and $$ for a dollar sign")
            name = match.group("named") or match.group("braced")
            if name is not None and name not in allowed:
                raise PromptTemplateError(f"{item}:{line}: unknown placeholder ${name}; the file it replaces "
                                          f"has: {', '.join('$' + n for n in sorted(allowed)) or '(none)'}")

    def _check_fields(self, item: Path, text: str) -> None:
        own = read_text(self.folder / item.name, max_bytes=MAX_PROMPT_BYTES)
        if "{" not in own:
            return  # a text used as it is (render refuses fields in it, should it be rendered)
        allowed = set(placeholders(own, str(self.folder / item.name)))
        for name in placeholders(text, str(item)):
            if name not in allowed:
                line = next(n for n, ln in enumerate(text.splitlines(), 1) if f"{{{name}" in ln)
                raise PromptTemplateError(f"{item}:{line}: unknown placeholder {{{name}}}; the file it replaces "
                                          f"has: {', '.join(sorted(allowed)) or '(none)'}")


@contextlib.contextmanager
def prompt_folder(folder: str | Path | None) -> Iterator[None]:
    """Use ``folder`` (None: the suites' own texts) as the prompt folder inside the block."""
    token = PROMPT_DIR.set(None if folder is None else Path(folder))
    try:
        yield
    finally:
        PROMPT_DIR.reset(token)
