"""Run config files (``buildbench run --config run.yaml``) and the one way a run is configured.

A run file holds the fields of `RunConfig` (suite, agent, protocol, model, options, tasks, seed,
concurrency, backend…) as YAML or JSON. :func:`build_run_config` turns those fields, however they
were given (a file, command-line flags laid over it, Python keyword arguments), into a checked
`RunConfig`: the suite's default agent and protocol filled in and the options parsed by the
suite's typed model. :func:`dump_run_config` writes the fully resolved file
(``--print-config``); every new run stores it as ``run.yaml`` beside its store. A run file's
relative paths are read against its own folder, and the resolved run holds every path absolute
(`buildbench.harness.run_paths`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

from .errors import ConfigError, UnknownNameError
from .run_paths import absolute_fields, option_paths
from .runner import RunConfig

#: What ``buildbench run`` writes into every new run folder (`RunConfig.to_yaml`).
RUN_FILE = "run.yaml"
#: A run file is a few lines; a bigger file is a wrong path.
MAX_RUN_FILE_BYTES = 1024 * 1024

_STR_FIELDS = ("suite", "agent", "protocol", "model", "split", "record", "replay", "tasks", "address")
#: Integer fields: (smallest, largest) as the command line accepts them.
_INT_FIELDS: dict[str, tuple[int, int | None]] = {
    "limit": (1, None), "samples": (1, 1_000_000), "seed": (0, None), "concurrency": (1, 100_000),
    "workers": (0, 1024),
}
_CHOICES = {"backend": ("process", "ray")}
FIELDS = tuple(f.name for f in fields(RunConfig))


def _check_field(key: str, value: Any) -> Any:
    """``value`` of run-file field ``key``, or ValueError saying what the field accepts."""
    if key == "options":
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise ValueError("expected a mapping of option names to values")
        return dict(value)
    if value is None and key not in ("suite", "agent", "protocol", "split", "backend"):
        return None
    if key in _INT_FIELDS:
        low, high = _INT_FIELDS[key]
        bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            raise ValueError(f"expected an integer {bounds}, got {value!r}")
        return value
    if not isinstance(value, str) or not value:
        raise ValueError(f"expected a non-empty string, got {value!r}")
    if key in _CHOICES and value not in _CHOICES[key]:
        raise ValueError(f"expected one of {', '.join(_CHOICES[key])}, got {value!r}")
    return value


def read_run_file(path: str | Path) -> dict[str, Any]:
    """The fields of run file ``path`` (YAML or JSON), each checked for its kind.

    Raises:
        ConfigError: One line naming the file, the field and what it accepts.
    """
    from buildbench.inputs import read_text

    from .yamlio import parse_yaml

    text = read_text(path, max_bytes=MAX_RUN_FILE_BYTES)
    try:
        data = parse_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        # Our own refusals (an alias, a repeated key, too deep) say what; the parser's do not.
        problem = getattr(exc, "problem", None) if isinstance(exc, (ComposerError, ConstructorError)) else None
        raise ConfigError(f"{path}: {problem or 'not YAML or JSON'}{where}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of run fields ({', '.join(FIELDS)}), got {type(data).__name__}")
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in FIELDS:
            raise ConfigError(f"{path}: unknown field {key!r}; fields: {', '.join(FIELDS)}")
        try:
            out[key] = _check_field(key, value)
        except ValueError as exc:
            raise ConfigError(f"{path}: {key}: {exc}") from None
    return out


def build_run_config(values: Mapping[str, Any], *, overrides: Mapping[str, Any] | None = None, where: str = "",
                     has_model: bool = False, base: Path | None = None) -> RunConfig:
    """The checked `RunConfig` of run fields ``values`` (a run file's, or Python keyword arguments)
    with ``overrides`` (command-line flags) laid over them, option by option for ``options``.

    The agent defaults to the suite's default agent (its model agent ``llm`` when a model is given
    and the default takes none), the protocol to the suite's default; the options are parsed once
    by the suite's typed model. ``where`` (the file ``values`` came from) prefixes the errors of
    its fields. The files the fields name (`buildbench.harness.run_paths`) are made absolute:
    those of ``values`` read against ``base`` (the run file's folder; None: the current
    directory), those of ``overrides`` against the current directory.

    Raises:
        ConfigError: One line naming the field (``options.KEY`` for an option) and what it accepts,
            or a file of ``values`` that does not exist, with the full path looked for.
    """
    from .suite import get_suite

    flags: dict[str, Any] = dict(overrides or {})
    prefix = f"{where}: " if where else ""
    for key in (*values, *flags):
        if key not in FIELDS:
            raise ConfigError(f"{prefix if key in values else ''}unknown field {key!r}; fields: {', '.join(FIELDS)}")
    merged = {**values, **{k: v for k, v in flags.items() if k != "options"}}

    def named(key: str) -> str:  # the prefix of a field's errors: only a file's fields name the file
        return f"{prefix}{key}: " if key in values and key not in flags else ""

    if not merged.get("suite"):
        raise ConfigError(f"{prefix}suite: missing (give SUITE or a run file with 'suite:')")
    try:
        suite = get_suite(str(merged["suite"]))
    except UnknownNameError as exc:
        raise ConfigError(f"{named('suite')}{exc}") from None
    file_values, flags = _absolute(suite, values, flags, base, prefix)
    merged = {**file_values, **{k: v for k, v in flags.items() if k != "options"}}
    given_options = dict(flags.get("options") or {})
    file_options = {k: v for k, v in (file_values.get("options") or {}).items() if k not in given_options}
    try:
        options = _parsed_options(suite, file_options)
    except _OptionError as exc:
        raise ConfigError(f"{prefix}options.{exc.key}: {exc.error}") from None
    try:
        options.update(_parsed_options(suite, given_options))
    except _OptionError as exc:
        raise exc.error from None
    options = suite.parse_options(options).given()  # in declaration order, as the run stores them
    agent = merged.get("agent") or default_agent(suite, bool(merged.get("model")) or has_model)
    protocol = merged.get("protocol") or suite.default_protocol or next(iter(suite.protocols))
    try:
        if ":" not in str(agent):  # a user's factory (file.py:fn) is loaded by the runner
            suite.agent(str(agent))
    except UnknownNameError as exc:
        raise ConfigError(f"{named('agent')}{exc}") from None
    try:
        suite.protocol(str(protocol))
    except UnknownNameError as exc:
        raise ConfigError(f"{named('protocol')}{exc}") from None
    backend = merged.get("backend") or "process"
    if merged.get("address") is not None and backend != "ray" and named("address"):
        # RunConfig's own check names the flag --address, which this user never typed
        raise ConfigError(f"{named('address')}only meaningful with backend: ray (this run's backend is {backend}); "
                          "remove it or set backend: ray")
    resolved = {**{k: v for k, v in merged.items() if v is not None}, "agent": agent, "protocol": protocol,
                "options": options}
    return RunConfig(**resolved)


class _OptionError(Exception):
    def __init__(self, key: str, error: ConfigError) -> None:
        super().__init__(str(error))
        self.key, self.error = key, error


def _absolute(suite: Any, values: Mapping[str, Any], overrides: Mapping[str, Any], base: Path | None,
              prefix: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``values`` and ``overrides`` with their paths made absolute; ConfigError for a file of
    ``values`` that does not exist (and is not overridden)."""
    cwd = Path.cwd()
    paths = option_paths(suite.option_specs())
    from_file, needed = absolute_fields(values, base or cwd, paths)
    given, _ = absolute_fields(overrides, cwd, paths)
    overridden = {*given, *(f"options.{name}" for name in given.get("options") or {})}
    for key, path in needed:
        if key not in overridden and not path.exists():
            raise ConfigError(f"{prefix}{key}: {path} does not exist")
    return from_file, given


def _parsed_options(suite: Any, raw: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` parsed by the suite's model, one option at a time so an error knows its key."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            out.update(suite.parse_options({key: value}).given())
        except ConfigError as exc:
            raise _OptionError(key, exc) from None
    return out


def default_agent(suite: Any, has_model: bool) -> str:
    """The suite's default agent; with a model, its model agent (``llm``) when the default takes none."""
    if has_model and not suite.agent(suite.default_agent).needs_model and "llm" in suite.agents:
        return "llm"
    return str(suite.default_agent)


def dump_run_config(config: RunConfig) -> str:
    """``config`` as a run file (YAML): every field, resolved; ``--config`` reads it back to the same run."""
    return config.to_yaml()
