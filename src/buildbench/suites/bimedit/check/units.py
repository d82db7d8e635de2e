"""The length unit of an IFC model, checked before IfcOpenShell's unit scale reads it.

IfcOpenShell takes the first of two length units an assignment names, loops forever on a
conversion-based unit defined through itself, reads a context-dependent unit as the metre and
takes a zero or negative factor as it is; each would put every length of the model off without
a word, so each is a :class:`~.errors.ModelError` here.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import cast

import ifcopenshell

from .errors import ModelError


def length_units(f: ifcopenshell.file, path: str | Path) -> list[ifcopenshell.entity_instance]:
    """The length units the unit assignments name (none: lengths are read as metres).

    Raises:
        ModelError: one assignment names two length units. IFC allows one unit of each type
            per assignment (rule IfcCorrectUnitAssignment); IfcOpenShell would take the first
            without a word, and every length of the model could be off by a factor of 1000.
    """
    found = []
    for assignment in f.by_type("IfcUnitAssignment"):
        units = [u for u in assignment.Units or () if getattr(u, "UnitType", None) == "LENGTHUNIT"]
        if len(units) > 1:
            raise ModelError(f"{path}: IfcUnitAssignment #{assignment.id()} assigns two length units, "
                             f"{_unit_name(units[0])} and {_unit_name(units[1])} (IFC allows one)")
        found += units
    for unit in found:
        _check_in_metres(unit, path)
    return found


def _check_in_metres(unit: object, path: str | Path) -> None:
    """Raise :class:`ModelError` unless a length unit comes down to the metre by positive factors.

    IfcOpenShell's unit scale loops forever on a conversion-based unit defined through itself,
    reads a context-dependent unit ("survey foot", no factor) as the metre, and takes a zero or
    negative factor as it is (a model of zero size, or mirrored), all without a word.
    """
    first = cast(ifcopenshell.entity_instance, unit)
    seen: list[int] = []
    while isinstance(unit, ifcopenshell.entity_instance) and unit.is_a("IfcConversionBasedUnit"):
        if unit.id() in seen:
            raise ModelError(f"{path}: length unit {_unit_name(first)} is defined through itself "
                             f"({' -> '.join(f'#{i}' for i in [*seen, unit.id()])})")
        seen.append(unit.id())
        factor = getattr(unit.ConversionFactor, "ValueComponent", None)
        value = getattr(factor, "wrappedValue", factor)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
            raise ModelError(f"{path}: length unit {_unit_name(unit)} converts by {value!r}, not a positive number")
        unit = getattr(unit.ConversionFactor, "UnitComponent", None)
    if not (isinstance(unit, ifcopenshell.entity_instance) and unit.is_a("IfcSIUnit") and unit.Name == "METRE"):
        what = _unit_name(unit) if isinstance(unit, ifcopenshell.entity_instance) else repr(unit)
        via = "" if unit is first else f" (it comes down to {what})"
        raise ModelError(f"{path}: length unit {_unit_name(first)} is not defined in metres{via}")


def _unit_name(unit: ifcopenshell.entity_instance) -> str:
    """``millimetre (#7)``, ``FOOT (#10)``: a unit as a reader finds it in the file."""
    if unit.is_a("IfcSIUnit"):
        name = f"{(unit.Prefix or '').lower()}{str(unit.Name).lower()}"
    else:
        name = str(getattr(unit, "Name", None) or unit.is_a())
    return f"{name} (#{unit.id()})"
