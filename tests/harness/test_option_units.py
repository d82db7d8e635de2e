"""Every option whose help or name gives a unit declares it in ``unit=``: docs/options.md and the
JSON Schema read the unit column, and an empty one beside "MiB" in the help reads as unitless."""

from __future__ import annotations

import re

import pytest

from buildbench.cli.option_help import bundled_suites
from buildbench.harness import get_suite
from buildbench.harness.options import COMMON_OPTIONS, OptionSpec

#: A unit as help texts and option names spell it, and the ``unit=`` it stands for.
HELP_UNITS = {"seconds": "s", "MiB": "MiB", "metres": "m", "pixels": "px", "tokens": "tokens"}
NAME_UNITS = {"_s": "s", "_mb": "MiB", "_px": "px", "_chars": "characters"}


def _specs() -> list[tuple[str, OptionSpec]]:
    out = [("common", spec) for spec in COMMON_OPTIONS]
    return out + [(name, spec) for name in bundled_suites() for spec in get_suite(name).options_model().specs]


def _expected_units(spec: OptionSpec) -> set[str]:
    said = {unit for word, unit in HELP_UNITS.items() if re.search(rf"\b{word}\b", spec.help)}
    named = {unit for suffix, unit in NAME_UNITS.items() if spec.name.endswith(suffix)}
    return said | named


@pytest.mark.parametrize(("suite", "spec"), _specs(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_an_option_that_names_a_unit_declares_it(suite: str, spec: OptionSpec) -> None:
    expected = _expected_units(spec)
    assert len(expected) <= 1, f"{suite}: option {spec.name} names several units: {expected}"
    if expected:
        assert spec.unit == expected.pop(), f"{suite}: option {spec.name} gives its unit in its help or name only"


def test_the_bimedit_sandbox_sizes_list_their_unit() -> None:
    specs = {spec.name: spec for spec in get_suite("bimedit").options_model().specs}
    assert specs["memory_mb"].unit == specs["disk_mb"].unit == "MiB"
