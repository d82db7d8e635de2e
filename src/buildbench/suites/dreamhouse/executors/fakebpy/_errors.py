"""The one error the fake ``bpy`` raises for anything it does not model."""

from __future__ import annotations

from collections.abc import Iterable


class UnsupportedAPIError(AttributeError):
    """A script used a part of the ``bpy``/``mathutils`` API the fast executor does not model.

    It subclasses ``AttributeError`` because that is what real Blender raises for a
    missing attribute, so ``hasattr``/``getattr(..., default)`` keep working in scripts;
    uncaught, its message names the API and lists what is supported instead.
    """


def unsupported(path: str, supported: Iterable[str] = ()) -> UnsupportedAPIError:
    """The error for ``path`` (e.g. ``bpy.ops.mesh.primitive_cylinder_add``), listing alternatives."""
    names = sorted(supported)
    tail = f" (supported: {', '.join(names)})" if names else ""
    return UnsupportedAPIError(f"fast executor: {path} is not supported{tail}")


def public_names(cls: type) -> list[str]:
    """Public attribute names a class defines (its supported API surface), for error messages."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is object:
            continue
        names.update(n for n in vars(klass) if not n.startswith("_"))
    return sorted(names)
