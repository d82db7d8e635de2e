"""Physics profiles: every constant of the simulation in one versioned TOML file (``profiles/*.toml``).

Each entry of a profile has a value, a unit and a source (``besiege``, ``paper``, ``spec`` or
``assumed``, the last with the reason in ``note``). A run picks one with ``-o physics=NAME|FILE``;
``PhysicsConfig.from_profile`` turns it into the settings the simulation reads, and every
result records the profile's name and hash. The hash covers the values only (sorted, as
canonical JSON): two profiles that simulate the same have the same hash whatever their notes say.

``with_overrides`` derives a perturbed profile (the sensitivity and calibration commands):
``{"weld_break_torque_nm": 2000.0}`` sets a value, ``{"drag": "2x"}`` scales a value or a
group of values (``[groups]`` of the file).
"""

from __future__ import annotations

import hashlib
import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from buildbench.inputs import read_text

DEFAULT_PROFILE = "besiege-1"
"""The profile every published result of ours uses."""
SOURCES = ("besiege", "paper", "spec", "assumed")
"""Where a value comes from (see the module docstring)."""

Value = float | int | str | tuple[float, ...]


class ProfileError(ValueError):
    """A profile that cannot be used; the message names the file (or profile) and the field."""


@dataclass(frozen=True)
class Entry:
    """One constant: its value, unit, source and note (the citation or the reason)."""

    value: Value
    unit: str
    source: str
    note: str = ""


@dataclass(frozen=True)
class PhysicsProfile:
    """A loaded profile.

    Attributes:
        name: Its name (the file's ``[profile] name``; a derived profile appends its overrides).
        version: The file's version number.
        entries: Every constant by name.
        groups: Names that scale several constants together.
        origin: Where it was read from (a file path or ``package:NAME``).
        description: One line from the file.
    """

    name: str
    version: int
    entries: Mapping[str, Entry]
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    origin: str = ""
    description: str = ""

    @property
    def values(self) -> dict[str, Value]:
        """Every constant's value by name."""
        return {k: e.value for k, e in self.entries.items()}

    @property
    def sha256(self) -> str:
        """Hash of the values (canonical JSON, sorted keys): equal values, equal hash."""
        return values_sha256(self.values)

    def label(self) -> str:
        """``name (sha256 prefix)``, as reports print it."""
        return f"{self.name} ({self.sha256[:12]})"

    def with_overrides(self, overrides: Mapping[str, float | int | str]) -> PhysicsProfile:
        """A new profile with some values set or scaled; its name records the overrides.

        Args:
            overrides: Constant or group name → a number (the new value; for a group, every member
                must share one unit unless it is 0) or ``"<factor>x"`` (multiply each member by the factor).

        Raises:
            ProfileError: An unknown name, a malformed factor, a non-numeric constant, or a number for
                a group whose members have different units.
        """
        entries = dict(self.entries)
        parts = []
        for key, change in overrides.items():
            members = self.groups.get(key, (key,))
            for member in members:
                if member not in entries:
                    known = ", ".join([*sorted(self.entries), *sorted(self.groups)])
                    raise ProfileError(f"profile {self.name}: unknown field {key!r} (known: {known})")
            factor, absolute = _change(self.name, key, change)
            if absolute not in (None, 0.0) and len({entries[m].unit for m in members}) > 1:
                raise ProfileError(f"profile {self.name}: field {key!r} is a group of different units; "
                                   "give a factor such as 2x, or 0")
            for member in members:
                old = entries[member]
                if isinstance(old.value, (str, tuple)) or isinstance(old.value, bool):
                    raise ProfileError(f"profile {self.name}: field {member!r} is not a number")
                new = absolute if absolute is not None else old.value * factor
                if isinstance(old.value, int):
                    if new != int(new):
                        raise ProfileError(f"profile {self.name}: field {member!r} must stay a whole number")
                    new = int(new)
                entries[member] = Entry(new, old.unit, "assumed", f"override of {self.name}: {key}={change}")
            parts.append(f"{key}={change}")
        return PhysicsProfile(f"{self.name}+{','.join(parts)}" if parts else self.name, self.version, entries,
                              self.groups, self.origin, self.description)


def _change(name: str, key: str, change: float | int | str) -> tuple[float, float | None]:
    """``(factor, None)`` for ``"<f>x"``, ``(1, value)`` for a number."""
    if isinstance(change, str):
        text = change.strip().lower()
        try:
            factor = float(text[:-1]) if text.endswith("x") else math.nan
        except ValueError:
            factor = math.nan
        if not (math.isfinite(factor) and factor >= 0):
            raise ProfileError(f"profile {name}: field {key!r}: {change!r} is not a factor such as 0.5x or 2x")
        return factor, None
    if isinstance(change, bool) or not math.isfinite(float(change)):
        raise ProfileError(f"profile {name}: field {key!r}: {change!r} is not a finite number")
    return 1.0, float(change)


def values_sha256(values: Mapping[str, Value]) -> str:
    """sha256 of ``values`` as canonical JSON (sorted keys, no spaces; floats as ``repr``)."""
    canonical = {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def profile_names() -> list[str]:
    """Names of the profiles shipped with the package."""
    folder = resources.files(__package__).joinpath("profiles")
    return sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_profile(name_or_path: str | Path = DEFAULT_PROFILE) -> PhysicsProfile:
    """A shipped profile by name, or a profile file (any path with a ``/`` or ending in ``.toml``).

    Raises:
        ProfileError: An unknown name, an unreadable or malformed file, or a bad field (one line naming
            the file and the field).
    """
    text_name = str(name_or_path)
    if isinstance(name_or_path, Path) or "/" in text_name or text_name.endswith(".toml"):
        path = Path(name_or_path)
        try:
            text = read_text(path)
        except OSError as exc:
            raise ProfileError(f"physics profile {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})"
                               ) from None
        return parse_profile(text, str(path))
    if text_name not in profile_names():
        raise ProfileError(f"physics profile {text_name!r}: no such profile (have: {', '.join(profile_names())}; "
                           "or give a .toml file)")
    text = resources.files(__package__).joinpath("profiles", f"{text_name}.toml").read_text(encoding="utf-8")
    return parse_profile(text, f"package:{text_name}")


def parse_profile(text: str, origin: str) -> PhysicsProfile:
    """A profile from TOML ``text`` (``origin`` names it in errors).

    Raises:
        ProfileError: Malformed TOML or a bad field.
    """
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"physics profile {origin}: not valid TOML ({exc})") from None
    head = raw.get("profile")
    if not isinstance(head, dict) or not isinstance(head.get("name"), str) or not head["name"]:
        raise ProfileError(f"physics profile {origin}: field 'profile.name' is missing (a non-empty string)")
    version = head.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ProfileError(f"physics profile {origin}: field 'profile.version' must be a whole number")
    table = raw.get("values")
    if not isinstance(table, dict) or not table:
        raise ProfileError(f"physics profile {origin}: field 'values' is missing (a table of constants)")
    entries = {key: _entry(origin, key, item) for key, item in table.items()}
    groups_raw = raw.get("groups", {})
    groups: dict[str, tuple[str, ...]] = {}
    if not isinstance(groups_raw, dict):
        raise ProfileError(f"physics profile {origin}: field 'groups' must be a table")
    for key, members in groups_raw.items():
        if not (isinstance(members, list) and members and all(m in entries for m in members)):
            raise ProfileError(f"physics profile {origin}: field 'groups.{key}' must list known values")
        groups[key] = tuple(members)
    extra = sorted(set(raw) - {"profile", "values", "groups"})
    if extra:
        raise ProfileError(f"physics profile {origin}: field {extra[0]!r} is not a profile section")
    return PhysicsProfile(head["name"], version, entries, groups, origin, str(head.get("description", "")))


def _entry(origin: str, key: str, item: Any) -> Entry:
    where = f"physics profile {origin}: field 'values.{key}'"
    if not isinstance(item, dict):
        raise ProfileError(f"{where} must be a table with value, unit and source")
    unknown = sorted(set(item) - {"value", "unit", "source", "note"})
    if unknown:
        raise ProfileError(f"{where}: unknown key {unknown[0]!r}")
    value = item.get("value")
    if isinstance(value, list):
        if not value or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            raise ProfileError(f"{where}: value must be a number, a string or a list of numbers")
        value = tuple(float(v) for v in value)
    elif isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ProfileError(f"{where}: value must be a number, a string or a list of numbers")
    if isinstance(value, float) and not math.isfinite(value):
        raise ProfileError(f"{where}: value must be finite")
    unit, source, note = item.get("unit"), item.get("source"), item.get("note", "")
    if not isinstance(unit, str) or not unit:
        raise ProfileError(f"{where}: unit is missing (write \"-\" for a pure number)")
    if source not in SOURCES:
        raise ProfileError(f"{where}: source must be one of {', '.join(SOURCES)}, got {source!r}")
    if not isinstance(note, str) or (source == "assumed" and not note.strip()):
        raise ProfileError(f"{where}: an assumed value needs a note giving the reason")
    return Entry(value, unit, source, note)
