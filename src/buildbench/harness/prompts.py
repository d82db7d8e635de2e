"""Replaceable prompt texts (``-o prompts=DIR``).

Each suite keeps its prompt texts as files in its package and reads them through a
:class:`PromptFiles`. With ``-o prompts=DIR`` a user's files of the same names replace them
for that run — the originals' released prompts, say, to make numbers comparable with a
paper; a name the folder lacks falls back to the suite's own file, and a file whose name the
suite does not know is refused before the run starts (a typo would otherwise be ignored).

The folder in force is a context variable the runner sets around each episode, so code deep
in an env or a pipeline reads the right text without passing the option along, and two runs
in one process (or concurrent episodes) cannot see each other's folder.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError
from .options import OptionSpec

#: The user's prompt folder of the running episode, or None for the suites' own texts.
PROMPT_DIR: ContextVar[Path | None] = ContextVar("buildbench_prompt_dir", default=None)

#: The option every suite with prompt files declares.
PROMPTS_OPTION = OptionSpec("prompts", "str", "folder of prompt files replacing the suite's own (same file names)")

# Prompt files are small; a bigger file is a wrong path, not a prompt.
MAX_PROMPT_BYTES = 1024 * 1024


@dataclass(frozen=True)
class PromptFiles:
    """The prompt texts of one suite: files with ``suffixes`` in ``folder``.

    Attributes:
        folder: The suite's own prompt folder (inside its package).
        suffixes: File endings that are prompts (``.md``, ``.txt``); other files there
            (``__init__.py``) are not.
    """

    folder: Path
    suffixes: tuple[str, ...] = (".md",)

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
        if path.stat().st_size > MAX_PROMPT_BYTES:
            raise ConfigError(f"{path}: prompt file over {MAX_PROMPT_BYTES} bytes")
        return path.read_text(encoding="utf-8")

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
                item.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise ConfigError(f"option prompts={str(folder)!r}: {item.name!r} is not UTF-8 text") from None
        return path.resolve()


@contextlib.contextmanager
def prompt_folder(folder: str | Path | None) -> Iterator[None]:
    """Use ``folder`` (None: the suites' own texts) as the prompt folder inside the block."""
    token = PROMPT_DIR.set(None if folder is None else Path(folder))
    try:
        yield
    finally:
        PROMPT_DIR.reset(token)
