"""The ``-o KEY=VALUE`` options of ``buildbench dreamhouse serve``: one frozen, typed class.

Named and typed as the suite's ``-o`` options of ``buildbench run dreamhouse``
(:class:`..options.DreamHouseOptions`), with the server's own defaults (released profile).
Each option is declared once, here; ``SERVE_OPTIONS`` (the help listing) is read from the class.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from buildbench.harness import OptionSpec
from buildbench.harness.errors import ConfigError
from buildbench.harness.option_model import Options, option

from ..options import Executor, Isolation, Renderer
from ..views_basis import Condition


class ServeOptions(Options):
    """The server's options, parsed once (:meth:`from_pairs`)."""

    # the released profile first: it is the server's default, as the released server's only one
    profile: Literal["released", "paper"] = option(
        "str", "validator profile (released: the released 10 tests)", default="released")
    condition: Condition = option("str", "which views are rendered for tasks without stored ones", default="frame")
    renderer: Renderer = option("str", "raster (ours, identical images on every machine), gl (OpenGL) or cycles "
                                 "(Blender Cycles)", default="raster")
    executor: Executor = option("str", "runs code submissions: fast (our bpy) or blender", default="fast")
    isolation: Isolation = option("str", "sandbox backend of the executor", default="auto")

    @classmethod
    def from_pairs(cls, pairs: Iterable[str]) -> ServeOptions:
        """Options from ``KEY=VALUE`` strings.

        Raises:
            ConfigError: For a pair without ``=``, an unknown key or a value out of its choices.
        """
        values: dict[str, str] = {}
        for pair in pairs:
            key, sep, raw = pair.partition("=")
            if not sep or not key:
                raise ConfigError(f"option {pair!r} is not KEY=VALUE")
            values[key] = raw
        return cls.parse(values, where="dreamhouse serve")


#: The options as listed by ``serve --help``, in declaration order.
SERVE_OPTIONS: tuple[OptionSpec, ...] = ServeOptions.specs
