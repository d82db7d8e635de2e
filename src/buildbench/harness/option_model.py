"""Run options as one frozen, typed object, built once per run.

Each option is declared once, as an :class:`~buildbench.harness.options.OptionSpec` (default,
bounds, unit, help); a suite's specs plus the common model-agent ones become a frozen pydantic
model (:func:`options_model`). The harness parses ``-o`` values, a config file's ``options:`` or
Python keyword arguments into it with :meth:`Options.parse` before the run folder exists, and
hands the object to the env, agent and protocol factories. The JSON Schema of a suite's options
is the model's (:meth:`Options.json_schema`).

This module imports pydantic; :mod:`buildbench.harness.options` stays light for start-up.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, Self, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from .errors import ConfigError
from .options import COMMON_OPTIONS, OptionKind, OptionSpec, OptionValue, check_value

_COMMON = {spec.name: spec for spec in COMMON_OPTIONS}


def _field(spec: OptionSpec) -> Any:
    """A pydantic field carrying the spec's default, bounds, unit and help."""
    extra: dict[str, Any] = {"x-kind": spec.kind}
    if spec.unit:
        extra["x-unit"] = spec.unit
    if spec.unset:
        extra["x-unset"] = spec.unset
    if spec.choices:
        extra["x-choices"] = list(spec.choices)
    if spec.path:
        extra["x-path"] = spec.path
    default = None if spec.default is None and spec.kind == "int-or-full" else spec.default
    return Field(default, description=spec.help or None, ge=spec.minimum, le=spec.maximum,
                 json_schema_extra=extra)


def _common(name: str) -> Any:
    return _field(_COMMON[name])


def option(kind: OptionKind, help: str = "", *, default: OptionValue = None, choices: tuple[str, ...] = (),
           minimum: float | None = None, maximum: float | None = None, unset: str = "", unit: str = "",
           path: str = "") -> Any:
    """Declare one field of a suite's options class (the field's name is the option's name)::

        class DreamHouseOptions(ModelOptions):
            max_steps: int = option("int", "actions allowed", default=40, minimum=1)
            scope: Literal["all", "early"] = option("str", "which tests decide a step", default="all")

    The arguments are :class:`~buildbench.harness.options.OptionSpec`'s (a ``Literal`` annotation
    gives a ``str`` option its choices); the class turns its fields back into specs (``specs``) for
    ``-o`` parsing and listings, so each option is written once, here.
    """
    return _field(OptionSpec("", kind, help, choices, minimum, maximum, default, unset, unit, path))


def shared_option(spec: OptionSpec) -> Any:
    """A field declared as the harness declares ``spec`` (``PROMPTS_OPTION``, ``DEGRADE_OPTION``):
    suites that read such an option list it as one of theirs, with the harness's one declaration."""
    return _field(spec)


def _spec_of(name: str, info: FieldInfo) -> OptionSpec:
    """The :class:`OptionSpec` a field declared with :func:`option` was made from."""
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    kind = extra.get("x-kind")
    if not isinstance(kind, str):
        raise TypeError(f"option {name}: declare it with buildbench.harness.option_model.option(...)")
    bounds = {type(m).__name__: m for m in info.metadata}
    minimum = getattr(bounds.get("Ge"), "ge", None)
    maximum = getattr(bounds.get("Le"), "le", None)
    choices = extra.get("x-choices") or (get_args(info.annotation) if get_origin(info.annotation) is Literal else ())
    return OptionSpec(name, kind, info.description or "", tuple(map(str, choices)),  # type: ignore[arg-type]
                      minimum, maximum, info.default, str(extra.get("x-unset", "")), str(extra.get("x-unit", "")),
                      str(extra.get("x-path", "")))


def _annotation(spec: OptionSpec) -> Any:
    if spec.choices and spec.kind == "str":
        base: Any = Literal[spec.choices]
    else:
        base = {"int": int, "float": float, "bool": bool, "str": str, "int-or-full": int,
                "float-or-none": float, "set": str}[spec.kind]
    return base | None if spec.default is None or spec.kind in ("int-or-full", "float-or-none") else base


class Options(BaseModel):
    """The options of one run, typed; frozen, unknown keys refused.

    ``given()`` are the values the run set explicitly (stored in the run's config); every other
    field holds its declared default. Code reads fields (``options.history``), never keys.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    #: The declarations of this model's fields, in listing order.
    specs: ClassVar[tuple[OptionSpec, ...]] = ()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if cls.__pydantic_generic_metadata__["origin"] is None and "specs" not in cls.__dict__:
            cls.specs = tuple(_spec_of(name, info) for name, info in cls.model_fields.items())

    @classmethod
    def parse(cls, raw: Mapping[str, Any], *, where: str) -> Self:
        """The options ``raw`` (``-o`` text, config-file values or Python values) parsed once.

        Raises:
            ConfigError: one line naming the unknown option and the known ones, or the option,
                the value and what it accepts.
        """
        if not isinstance(raw, Mapping):  # Gymnasium, MCP and Python callers pass what they like
            raise ConfigError(f"options for {where}: expected a mapping of option names to values, "
                              f"got {type(raw).__name__}")
        known = {spec.name: spec for spec in cls.specs}
        values: dict[str, Any] = {}
        for key, value in raw.items():
            if key not in known:
                raise ConfigError(f"unknown option {str(key)[:60]!r} for {where}; options: {', '.join(sorted(known))}")
            values[key] = check_value(known[key], value)
        try:
            return cls.model_validate(values)
        except ValidationError as exc:  # a rule among options (a model validator): one line
            message = exc.errors()[0]["msg"].removeprefix("Value error, ")
            if len(message) > 300:  # a rule quoting a 100 kB value (a model spec) would fill the line
                message = f"{message[:300]}… ({len(message)} characters)"
            raise ConfigError(f"options for {where}: {message}") from None

    def given(self) -> dict[str, Any]:
        """The explicitly given options, as JSON values (what a run's config stores)."""
        given = self.model_fields_set
        return {name: getattr(self, name) for name in type(self).model_fields if name in given}

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """Standard JSON Schema (draft 2020-12) of these options."""
        return cls.model_json_schema()


class ModelOptions(Options):
    """What every suite's model agent and model client understand (``COMMON_OPTIONS``).

    ``None`` is unset: the agent's or model client's own value, no budget limit, full history.
    """

    max_tokens: int | None = _common("max_tokens")
    temperature: float | None = _common("temperature")
    top_p: float | None = _common("top_p")
    #: Past exchanges kept in the prompt; None: the whole conversation (``full``) or unset.
    history: int | None = _common("history")
    max_requests: int | None = _common("max_requests")
    max_input_tokens: int | None = _common("max_input_tokens")
    max_output_tokens: int | None = _common("max_output_tokens")
    tools: bool | None = _common("tools")
    timeout_s: float | None = _common("timeout_s")
    max_retries: int | None = _common("max_retries")

    specs: ClassVar[tuple[OptionSpec, ...]] = COMMON_OPTIONS

    def agent_settings(self) -> dict[str, Any]:
        """``LLMAgent`` keyword arguments of the given options (the agent's own values otherwise)."""
        given = self.model_fields_set
        out: dict[str, Any] = {}
        for name in ("max_tokens", "temperature", "top_p", "history"):
            # ``none`` of max_tokens/temperature is the agent's own; of top_p and history it is a value.
            if name in given and (getattr(self, name) is not None or name in ("top_p", "history")):
                out[name] = getattr(self, name)
        budget = {k: getattr(self, k) for k in ("max_requests", "max_input_tokens", "max_output_tokens")
                  if k in given and getattr(self, k) is not None}
        if budget:
            out["budget"] = budget
        if "tools" in given and self.tools is not None:
            out["use_tools"] = self.tools
        return out

    def client_settings(self) -> dict[str, Any]:
        """Model-client keyword arguments of the given options (``timeout_s``, retries)."""
        from buildbench.llm import RetryPolicy

        out: dict[str, Any] = {}
        if self.timeout_s is not None:
            out["timeout_s"] = self.timeout_s
        if self.max_retries is not None:
            out["retry"] = RetryPolicy(max_attempts=self.max_retries + 1)
        return out


@functools.cache
def options_model(name: str, specs: tuple[OptionSpec, ...]) -> type[ModelOptions]:
    """The frozen options model of suite ``name``: its ``specs`` beside the common ones (a spec
    named like a common option replaces it: the suite's own default, e.g. a paper's ``top_p``)."""
    fields: dict[str, Any] = {spec.name: (_annotation(spec), _field(spec)) for spec in specs}
    title = "".join(part.capitalize() for part in name.replace("-", "_").split("_")) + "Options"
    model: type[ModelOptions] = create_model(title, __base__=ModelOptions, **fields)
    own = {spec.name: spec for spec in specs}
    model.specs = (*(own.pop(spec.name, spec) for spec in COMMON_OPTIONS), *own.values())
    return model
