"""The ``-o KEY=VALUE`` options of ``buildbench dreamhouse serve``, checked."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from buildbench.harness import OptionSpec
from buildbench.harness.errors import ConfigError

from ..views import RENDERERS
from ..views_basis import CONDITIONS

#: The options, named as the suite's ``-o`` options of ``buildbench run dreamhouse``; their
#: defaults are the :class:`ServeOptions` defaults (released profile, frame views, gl, fast executor).
SERVE_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("profile", "str", "validator profile (released: the released 10 tests)", ("released", "paper"),
               default="released"),
    OptionSpec("condition", "str", "which views are rendered for tasks without stored ones", CONDITIONS,
               default="frame"),
    OptionSpec("renderer", "str", "gl (fast) or cycles (Blender Cycles)", RENDERERS, default="gl"),
    OptionSpec("executor", "str", "runs code submissions: fast (our bpy) or blender", ("fast", "blender"),
               default="fast"),
    OptionSpec("isolation", "str", "sandbox backend of the executor", ("auto", "bwrap", "process"),
               default="auto"),
)


def _default(name: str) -> str:
    """The declared default of the ``str`` option ``name``: the one place a serve default is written."""
    default = next(spec.default for spec in SERVE_OPTIONS if spec.name == name)
    if not isinstance(default, str):
        raise TypeError(f"serve option {name}: default {default!r} is not a string")
    return default


@dataclass(frozen=True)
class ServeOptions:
    """The server's options; each default is the one declared in :data:`SERVE_OPTIONS`."""

    profile: str = _default("profile")
    condition: str = _default("condition")
    renderer: str = _default("renderer")
    executor: str = _default("executor")
    isolation: str = _default("isolation")

    @classmethod
    def from_pairs(cls, pairs: Iterable[str]) -> ServeOptions:
        """Options from ``KEY=VALUE`` strings.

        Raises:
            ConfigError: For a pair without ``=``, an unknown key or a value out of its choices.
        """
        specs = {spec.name: spec for spec in SERVE_OPTIONS}
        values: dict[str, str] = {}
        for pair in pairs:
            key, sep, raw = pair.partition("=")
            if not sep or not key:
                raise ConfigError(f"option {pair!r} is not KEY=VALUE")
            if key not in specs:
                raise ConfigError(f"unknown option {key!r} for dreamhouse serve; options: {', '.join(specs)}")
            values[key] = specs[key].parse(raw)
        return cls(**values)
