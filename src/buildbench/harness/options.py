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

OptionKind = Literal["int", "float", "bool", "str", "int-or-full", "float-or-none", "set"]
#: A parsed option value; ``None`` is "unset" (``full`` of ``int-or-full``, ``none`` of ``float-or-none``).
OptionValue = int | float | bool | str | None

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
#: Largest integer option value: beyond it a value cannot round-trip through JSON numbers or
#: fit the C integers of sandbox limits, so it is refused instead of overflowing mid-run.
LARGEST_INT = 2**53


@dataclass(frozen=True)
class OptionSpec:
    """One ``-o`` option.

    Attributes:
        kind: ``int``, ``float``, ``bool``, ``str``, ``int-or-full`` (an int, or ``full``),
            ``float-or-none`` (a number, or ``none``) or ``set`` (any of ``choices``,
            comma-separated; parsed to the names given, comma-joined, duplicates dropped).
        choices: Allowed values of a ``str`` option (empty: any string) or of a ``set``'s members.
        minimum / maximum: Bounds of a number, inclusive.
        default: The value used when the run does not give the option, as :meth:`parse` returns it.
            ``None`` means unset: nothing is passed on, so "no limit", "no file", ``full`` history,
            or the consumer's own value (e.g. a protocol's budget).
        unset: What an unset (``None``) default means, shown after it, e.g. ``no limit``.
        unit: The unit of a number (``s``, ``tokens``, ``MiB``), for schemas and docs.
        path: How a ``str`` value names a file or folder, so that a run file's relative value is
            read against the run file's folder (`buildbench.harness.run_paths`): ``input`` (must
            exist), ``output`` (written, may not exist yet) or a suffix such as ``.toml`` (a file
            when the value has a ``/`` or that suffix, else a name); empty for values that are
            not paths (a model spec neither: it is the key of recorded calls).
    """

    name: str
    kind: OptionKind
    help: str = ""
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    default: OptionValue = None
    unset: str = ""
    unit: str = ""
    path: str = ""

    def __post_init__(self) -> None:
        # A default the option itself would refuse is a declaration error, caught at import.
        if self.default is not None and self.parse(self.default) != self.default:
            raise ValueError(f"option {self.name}: default {self.default!r} is not a parsed {self.kind}")

    def describe(self) -> str:
        """One line for listings: the accepted values, the help, then the default, e.g.
        ``int >= 1: submissions allowed by the refine protocol (default 3)``."""
        accepted = {"int-or-full": "int or 'full'", "float-or-none": "float or 'none'"}.get(self.kind, self.kind)
        if self.choices:
            accepted = " | ".join(self.choices)
        if self.kind == "set":
            accepted = f"any of {', '.join(self.choices)}, comma-separated"
        if self.minimum is not None and self.maximum is not None:
            accepted += f" in [{_number(self.minimum)}, {_number(self.maximum)}]"
        elif self.minimum is not None:
            accepted += f" >= {_number(self.minimum)}"
        elif self.maximum is not None:
            accepted += f" <= {_number(self.maximum)}"
        described = f"{accepted}: {self.help}" if self.help else accepted
        meaning = f": {self.unset}" if self.default is None and self.unset else ""
        return f"{described} (default {self.shown_default()}{meaning})"

    def shown_default(self) -> str:
        """The default as a user would type it after ``-o NAME=``: ``none`` when unset."""
        value = self.default
        if value is None:
            return "full" if self.kind == "int-or-full" else "none"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return _number(value)
        return value or "''"


    def parse(self, value: Any) -> Any:
        """``value`` converted to the option's type; ConfigError names the option otherwise."""
        given = f"option {self.name}={_shown(value)}"
        try:
            out = self._convert(value)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{given}: {exc}") from None
        if isinstance(out, (int, float)) and not isinstance(out, bool):
            if isinstance(out, int) and abs(out) > LARGEST_INT:
                raise ConfigError(f"{given}: too large (at most {LARGEST_INT} in magnitude)")
            if self.minimum is not None and out < self.minimum:
                raise ConfigError(f"{given}: must be >= {self.minimum:g}")
            if self.maximum is not None and out > self.maximum:
                raise ConfigError(f"{given}: must be <= {self.maximum:g}")
        return out

    def _convert(self, value: Any) -> Any:
        if self.default is None and self.kind in ("str", "int", "float", "bool") and (
                value is None or (isinstance(value, str) and value.strip().lower() == "none")):
            # Unset, spelled as listings show it (``none``) or as a file's null.
            return None
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in _TRUE + _FALSE:
                return text in _TRUE
            raise ValueError(f"expected true or false, got {_shown(value)}")
        if self.kind == "int-or-full":
            if value is None or str(value) == "full":
                return "full"
            return _as_int(value, "an integer or 'full'")
        if self.kind == "int":
            return _as_int(value, "an integer")
        if self.kind == "set":
            items = value if isinstance(value, (list, tuple)) else str(value).split(",")
            names = [str(item).strip() for item in items if str(item).strip()]
            if bad := [name for name in names if name not in self.choices]:
                raise ValueError(f"unknown {', '.join(map(repr, bad))}; expected any of {', '.join(self.choices)}, "
                                 "comma-separated")
            return ",".join(dict.fromkeys(names))
        if self.kind == "float-or-none" and (value is None or str(value).lower() == "none"):
            return None
        if self.kind in ("float", "float-or-none"):
            if isinstance(value, bool):
                raise ValueError("expected a number, got a boolean")
            try:
                out = float(value)
            except (TypeError, ValueError):  # float()'s own message repeats the whole value
                raise ValueError("expected a number") from None
            if not math.isfinite(out):
                raise ValueError("expected a finite number")
            return out
        if value is None or isinstance(value, (bool, list, tuple, dict)):
            # str() would turn a file's [a, b], yes or null into text nobody typed.
            raise ValueError(f"expected {'one of ' + ', '.join(self.choices) if self.choices else 'a string'}, "
                             f"got {_kind_of(value)}")
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
    if text.lstrip("+-").isdecimal():
        return int(text)
    try:  # 1e3 and 2.0 are whole numbers too
        number = float(text)
    except ValueError:
        number = math.nan
    if math.isfinite(number) and number.is_integer():
        return int(number)
    raise ValueError(f"expected {what}")


def _kind_of(value: Any) -> str:
    return {type(None): "null", bool: "a boolean", dict: "a mapping"}.get(type(value), "a list")


def _shown(value: Any, limit: int = 60) -> str:
    """``value`` as an error line shows it: repr, cut to ``limit`` characters (a 100 kB value
    would otherwise make the one error line 100 kB)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _number(value: float) -> str:
    """``value`` as typed: whole numbers in full (``65536``, not ``6.6e+04``)."""
    if float(value).is_integer() and abs(value) < LARGEST_INT:
        return str(int(value))
    return f"{value:g}"


#: Defaults of the run settings that are not ``-o`` options, here (a light module) so the command
#: line shows the values `RunConfig` uses without importing the runner.
DEFAULT_CONCURRENCY = 8
DEFAULT_WORKERS = 2


#: Options every suite's model agent and model client understand.
COMMON_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("max_tokens", "int", "output tokens per model call", minimum=1, maximum=1_000_000,
               unset="the agent's own", unit="tokens"),
    OptionSpec("temperature", "float", "sampling temperature", minimum=0.0, maximum=2.0, unset="the agent's own"),
    OptionSpec("top_p", "float", "nucleus-sampling mass", minimum=1e-6, maximum=1.0, unset="the server's own"),
    OptionSpec("history", "int-or-full", "past turns kept in the prompt ('full' or k)", minimum=0, maximum=100_000),
    OptionSpec("max_requests", "int", "model calls per episode", minimum=0, maximum=1_000_000, unset="no limit"),
    OptionSpec("max_input_tokens", "int", "input tokens per episode", minimum=0, maximum=10**12,
               unset="no limit", unit="tokens"),
    OptionSpec("max_output_tokens", "int", "output tokens per episode", minimum=0, maximum=10**12,
               unset="no limit", unit="tokens"),
    OptionSpec("tools", "bool", "act through function calls instead of text", unset="the agent's own"),
    OptionSpec("timeout_s", "float", "seconds per model request", minimum=0.001, maximum=86_400.0,
               unset="the model client's own", unit="s"),
    OptionSpec("max_retries", "int", "retries of a failed model request", minimum=0, maximum=100,
               unset="the model client's own"),
)


def check_value(spec: OptionSpec, value: Any) -> Any:
    """``value`` parsed by ``spec`` as runs store it: ``full`` of an ``int-or-full`` is ``None``."""
    parsed = spec.parse(value)
    return None if parsed == "full" and spec.kind == "int-or-full" else parsed


def check_options(options: Mapping[str, Any], declared: Iterable[OptionSpec], *, where: str) -> dict[str, Any]:
    """``options`` with every value parsed, or ConfigError for an unknown key or a bad value.

    ``history`` keeps the spelling protocols expect (``None`` for ``full``). The typed object a
    run hands its factories is built from the same specs (`buildbench.harness.option_model`).
    """
    specs = {spec.name: spec for spec in (*COMMON_OPTIONS, *declared)}
    out: dict[str, Any] = {}
    for key, value in options.items():
        if key not in specs:
            raise ConfigError(f"unknown option {key!r} for {where}; options: {', '.join(sorted(specs))}")
        out[key] = check_value(specs[key], value)
    return out
