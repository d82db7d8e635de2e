"""Path parameters of the commands (only click is imported: ``buildbench mcp`` stays light)."""

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
