"""Parameter types shared by every command group, the core commands and those a package adds
(``buildbench mcp``, ``buildbench scenes``, a suite's group). Outside the ``buildbench.cli`` package
and importing only click: a group's module imported first (``buildbench.integrations.mcp_cli``)
would otherwise load the CLI, which imports that group's module back half-made."""

from __future__ import annotations

from typing import Any

import click


class GivenPath(click.Path):
    """``click.Path`` that refuses an empty value: ``""`` is what an unset shell variable gives,
    and as a path it is the current folder (a run, figures or an export written where the
    command happened to run)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("an empty path; give a file or folder name", param, ctx)
        return super().convert(value, param, ctx)
