"""The error of an IFC file that cannot be read (its own module: the model reader and the unit
checks both raise it)."""

from __future__ import annotations


class ModelError(ValueError):
    """An IFC file could not be read; the message says which file and why."""
