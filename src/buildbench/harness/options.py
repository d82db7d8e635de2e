"""Run options (``-o KEY=VALUE``): declared, typed and checked before the first episode.

Every suite declares the options it reads; the harness adds the ones every model agent
understands. A run with an undeclared key, or a value of the wrong type or out of range, is
refused with one line naming the option and what it accepts, instead of being ignored or
failing inside an episode.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .errors import ConfigError

OptionKind = Literal["int", "float", "bool", "str", "int-or-full", "float-or-none"]

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
#: Largest integer option value: beyond it a value cannot round-trip through JSON numbers or
#: fit the C integers of sandbox limits, so it is refused instead of overflowing mid-run.
LARGEST_INT = 2**53


@dataclass(frozen=True)
class OptionSpec:
    """One ``-o`` option.

    Attributes:
        kind: ``int``, ``float``, ``bool``, ``str``, ``int-or-full`` (an int, or ``full``) or
            ``float-or-none`` (a number, or ``none``).
        choices: Allowed values of a ``str`` option (empty: any string).
        minimum / maximum: Bounds of a number, inclusive.
    """

    name: str
    kind: OptionKind
    help: str = ""
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None

    def describe(self) -> str:
        """One line for listings: the accepted values, then the help, e.g.
        ``int >= 1: submissions allowed by the refine protocol``."""
        accepted = {"int-or-full": "int or 'full'", "float-or-none": "float or 'none'"}.get(self.kind, self.kind)
        if self.choices:
            accepted = " | ".join(self.choices)
        if self.minimum is not None and self.maximum is not None:
            accepted += f" in [{self.minimum:g}, {self.maximum:g}]"
        elif self.minimum is not None:
            accepted += f" >= {self.minimum:g}"
        elif self.maximum is not None:
            accepted += f" <= {self.maximum:g}"
        return f"{accepted}: {self.help}" if self.help else accepted

    def parse(self, value: Any) -> Any:
        """``value`` converted to the option's type; ConfigError names the option otherwise."""
        try:
            out = self._convert(value)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"option {self.name}={value!r}: {exc}") from None
        if isinstance(out, (int, float)) and not isinstance(out, bool):
            if isinstance(out, int) and abs(out) > LARGEST_INT:
                raise ConfigError(f"option {self.name}={value!r}: too large (at most {LARGEST_INT} in magnitude)")
            if self.minimum is not None and out < self.minimum:
                raise ConfigError(f"option {self.name}={value!r}: must be >= {self.minimum:g}")
            if self.maximum is not None and out > self.maximum:
                raise ConfigError(f"option {self.name}={value!r}: must be <= {self.maximum:g}")
        return out

    def _convert(self, value: Any) -> Any:
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in _TRUE + _FALSE:
                return text in _TRUE
            raise ValueError(f"expected true or false, got {value!r}")
        if self.kind == "int-or-full":
            if value is None or str(value) == "full":
                return "full"
            return _as_int(value, "an integer or 'full'")
        if self.kind == "int":
            return _as_int(value, "an integer")
        if self.kind == "float-or-none" and (value is None or str(value).lower() == "none"):
            return None
        if self.kind in ("float", "float-or-none"):
            if isinstance(value, bool):
                raise ValueError("expected a number, got a boolean")
            out = float(value)
            if not math.isfinite(out):
                raise ValueError("expected a finite number")
            return out
        text = str(value)
        if self.choices and text not in self.choices:
            raise ValueError(f"expected one of {', '.join(self.choices)}")
        return text


def _as_int(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"expected {what}, got a boolean")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text.lstrip("+-").isdigit():
        return int(text)
    raise ValueError(f"expected {what}")


#: Options every suite's model agent and model client understand.
COMMON_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("max_tokens", "int", "output tokens per model call", minimum=1),
    OptionSpec("temperature", "float", "sampling temperature", minimum=0.0, maximum=2.0),
    OptionSpec("history", "int-or-full", "past turns kept in the prompt ('full' or k)", minimum=0),
    OptionSpec("max_requests", "int", "model calls per episode", minimum=0),
    OptionSpec("max_input_tokens", "int", "input tokens per episode", minimum=0),
    OptionSpec("max_output_tokens", "int", "output tokens per episode", minimum=0),
    OptionSpec("tools", "bool", "act through function calls instead of text"),
    OptionSpec("timeout_s", "float", "seconds per model request", minimum=0.001),
    OptionSpec("max_retries", "int", "retries of a failed model request", minimum=0),
)


def check_options(options: Mapping[str, Any], declared: Iterable[OptionSpec], *, where: str) -> dict[str, Any]:
    """``options`` with every value parsed, or ConfigError for an unknown key or a bad value.

    ``history`` keeps the spelling protocols expect (``None`` for ``full``).
    """
    specs = {spec.name: spec for spec in (*COMMON_OPTIONS, *declared)}
    out: dict[str, Any] = {}
    for key, value in options.items():
        if key not in specs:
            raise ConfigError(f"unknown option {key!r} for {where}; options: {', '.join(sorted(specs))}")
        parsed = specs[key].parse(value)
        out[key] = None if parsed == "full" and specs[key].kind == "int-or-full" else parsed
    return out
