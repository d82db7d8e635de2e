"""The top-level command group: each suite's own click group as a subcommand, loaded when named.

A suite's CLI is the ``cli`` group in the ``cli`` module of its package. It is found from the
entry point without importing the suite, and ``buildbench --help`` lists it with the first
line of that group's docstring read from the source (as click would shorten it), so showing
the help imports no suite, simulator, IFC or SciPy. A group whose help cannot be read that
way (no docstring, a ``help=`` argument, a module that is not a plain source file) is
imported as before.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import importlib.util
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path

import click

from buildbench.cliargs import checked_paths


class SuiteGroups(click.Group):
    """Adds each suite's own click group as a subcommand, importing it on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from buildbench.harness.registry import suite_names

        return sorted(set(super().list_commands(ctx)) | {n for n in suite_names() if _suite_cli(n)})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        # Every path parameter, a suite's or a package's included, is checked the one way (cliargs).
        cmd = super().get_command(ctx, name)
        if cmd is not None:
            return checked_paths(cmd)
        target = _suite_cli(name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        command: click.Command = getattr(importlib.import_module(module), attr)
        return checked_paths(command)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        # A suite group's own help ends with the -o options of its suite, from its options class;
        # built only when that help is shown (loading the suite's options takes about a second).
        asks_help = not rest or rest[0] in ctx.help_option_names
        if name is not None and command is not None and name not in self.commands and asks_help \
                and command.epilog is None:
            from .option_help import suite_options_epilog

            command.epilog = suite_options_epilog(name)
        return name, command, rest

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's own version calls get_command for every name, importing every suite's CLI.
        names = [n for n in self.list_commands(ctx) if not (n in self.commands and self.commands[n].hidden)]
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            doc = None if name in self.commands else _suite_doc(name)
            if doc is not None:  # shortened by click's own rule, as for a loaded group
                rows.append((name, click.Command(name, help=doc).get_short_help_str(limit)))
                continue
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _find_spec(name: str) -> ModuleSpec | None:
    """``importlib.util.find_spec`` without importing the parent packages when avoidable
    (finding ``pkg.suite`` would import ``pkg``, whose ``__init__`` may load the suite)."""
    parent, _, _ = name.rpartition(".")
    if not parent or parent in sys.modules:
        return importlib.util.find_spec(name)
    parent_spec = _find_spec(parent)
    if parent_spec is None or parent_spec.submodule_search_locations is None:
        return None
    found = importlib.machinery.PathFinder.find_spec(name, list(parent_spec.submodule_search_locations))
    if found is None and not parent_spec.has_location:  # not a plain folder: ask the usual way
        return importlib.util.find_spec(name)
    return found


def _suite_cli(name: str) -> str | None:
    """``module:attribute`` of suite ``name``'s click group, or None when it has none."""
    from buildbench.harness.errors import UnknownNameError
    from buildbench.harness.registry import suite_target

    try:
        module = suite_target(name).partition(":")[0]
    except UnknownNameError:
        return None
    try:
        spec = _find_spec(module)
        if spec is not None and spec.submodule_search_locations is None:
            module = module.rpartition(".")[0]  # registered by a module inside the suite package
        found = _find_spec(module + ".cli") is not None
    except ImportError:  # a plugin registered but not installed must not break every command
        return None
    return f"{module}.cli:cli" if found else None


def _suite_doc(name: str) -> str | None:
    """The docstring of suite ``name``'s ``cli`` group read from its source, or None."""
    target = _suite_cli(name)
    if target is None or target.partition(":")[0] in sys.modules:
        return None
    module, _, attr = target.partition(":")
    try:
        spec = _find_spec(module)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    except (ImportError, OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == attr:
            if any(isinstance(d, ast.Call) and any(k.arg in ("help", "short_help", "hidden", "deprecated") for k in d.keywords)
                   for d in node.decorator_list):
                return None
            return ast.get_docstring(node, clean=False)  # raw, as click receives it
    return None
