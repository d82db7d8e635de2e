"""Terminal tables that never cut a number or a word and fit the terminal's width.

A table wider than the terminal is split into several tables by columns, each repeating the
first (label) column, rather than printed wider or truncated; only a single column wider than
the terminal (a long number list) is printed at its own width.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .stats import Estimate

#: Narrowest width tables are laid out for (a terminal narrower than this still gets it).
MIN_WIDTH = 60


def cell_text(value: Any) -> str:
    """A cell as text: floats to 3 decimals (`number_text`), a missing value as ``n/a``, an
    `Estimate` to its own digits, its ``± std`` where it has one, then its 95 % interval (none
    where it has none)."""
    if value is None:
        return "n/a"
    if isinstance(value, Estimate):
        text = number_text(value, value.digits)
        if not math.isnan(value.std):
            text += f" ± {number_text(value.std, value.digits)}"
        if value == value and math.isfinite(value.low) and math.isfinite(value.high):
            text += f" [{number_text(value.low, value.digits)}, {number_text(value.high, value.digits)}]"
        return text
    return number_text(value) if isinstance(value, float) else str(value)


def number_text(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` decimals; from 1e9 on in scientific notation, so a huge value reads
    as 1.000e+308 rather than as a row of 309 digits; NaN (no value) as ``n/a``."""
    if value != value:
        return "n/a"
    if math.isinf(value) or abs(value) >= 1e9:
        return f"{value:.{digits}e}"
    return f"{value:.{digits}f}"


def interval_span(interval: Mapping[str, Any] | None, digits: int = 3) -> str:
    """A 95 % interval (`buildbench.harness.stats.Interval.to_dict`) as ``[low, high]``, or why
    there is none: no scored value, one task only (nothing to resample: the interval would be the
    mean itself, a false certainty) or a non-finite value among them."""
    if not interval or not interval.get("n"):
        return "n/a"
    if interval.get("tasks") == 1:
        return "none (1 task)"
    low, high = interval["low"], interval["high"]
    if not (math.isfinite(low) and math.isfinite(high)):
        return "none (a value is infinite)"
    return f"[{number_text(low, digits)}, {number_text(high, digits)}]"


def cell_intervals(tables: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The intervals of the `Estimate` cells of titled tables, for a machine-readable report: per
    table with any, one mapping per row (in order) from column to value, low, high and n."""
    out: dict[str, list[dict[str, Any]]] = {}
    for title, rows in tables.items():
        found = [{col: cell.to_dict() for col, cell in row.items() if isinstance(cell, Estimate)} for row in rows]
        if any(found):
            out[title] = found
    return out


def tables_json(tables: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    """Titled tables as the JSON a suite's own report prints: ``tables`` and ``table_intervals``
    (`cell_intervals`), as ``buildbench report --json`` gives them, with a value that is no
    number (NaN: no interval, no data) as null: NaN is not JSON and breaks jq and browsers."""
    import json

    from buildbench.jsonio import json_ready

    body = {"tables": tables, "table_intervals": cell_intervals(tables)}
    return json.dumps(json_ready(body), indent=2, default=str, allow_nan=False)


@dataclass(frozen=True)
class _Column:
    name: str
    header: tuple[str, ...]
    width: int  # characters of its widest line
    prose: bool


def _layout(rows: Sequence[dict[str, Any]]) -> list[_Column]:
    columns: list[str] = []
    for row in rows:
        columns.extend(c for c in row if c not in columns)
    out = []
    for col in columns:
        cells = [cell_text(row.get(col, "")) for row in rows]
        prose = any(" " in text and re.search("[A-Za-z]{3}", text) for text in cells)
        longest_word = max((len(word) for text in cells for word in text.split()), default=1)
        cell_width = max(min(max(map(len, cells)), 16), longest_word) if prose else max(map(len, cells))
        header = textwrap.wrap(str(col), max(cell_width, 10), break_long_words=False) or [str(col)]
        out.append(_Column(col, tuple(header), max(cell_width, *map(len, header)), prose))
    return out


def _table(title: str, layout: Sequence[_Column], rows: Sequence[dict[str, Any]]) -> Any:
    from rich.table import Table

    table = Table(title=title)
    for col in layout:
        table.add_column("\n".join(col.header), no_wrap=not col.prose, min_width=col.width)
    for row in rows:
        table.add_row(*(cell_text(row.get(c.name, "")) for c in layout))
    return table


def paper_table(title: str, rows: list[dict[str, Any]]) -> tuple[Any, int]:
    """A suite table and the console width (columns) it needs without losing a character.

    Numbers, ids and number lists are never cut or wrapped; prose cells (words of three letters
    or more) and headers wrap at word boundaries.
    """
    layout = _layout(rows)
    return _table(title, layout, rows), 1 + sum(c.width + 3 for c in layout)


def table_parts(title: str, rows: list[dict[str, Any]], max_width: int) -> list[tuple[Any, int]]:
    """``rows`` as one or more tables, each at most ``max_width`` wide where a split can make it
    so: columns are taken in order and every part repeats the first column."""
    layout = _layout(rows)
    first, rest = layout[0], layout[1:]
    parts: list[list[_Column]] = []
    current: list[_Column] = [first]
    width = 1 + first.width + 3
    for col in rest:
        if len(current) > 1 and width + col.width + 3 > max_width:
            parts.append(current)
            current, width = [first], 1 + first.width + 3
        current.append(col)
        width += col.width + 3
    parts.append(current)
    out = []
    for i, part in enumerate(parts, 1):
        name = title if len(parts) == 1 else f"{title} ({i}/{len(parts)})"
        out.append((_table(name, part, rows), 1 + sum(c.width + 3 for c in part)))
    return out


def print_table(console: Any, title: str, rows: list[dict[str, Any]]) -> None:
    """Print ``rows`` within the console's width, split by columns when they do not fit."""
    from rich.console import Console

    if not rows:
        return
    limit = max(console.width, MIN_WIDTH)
    for table, width in table_parts(title, rows, limit):
        target = console if width <= console.width else Console(file=console.file, width=width)
        target.print(table)
