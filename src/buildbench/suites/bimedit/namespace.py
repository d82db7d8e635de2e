"""The namespace agent code runs in: the sandbox setup hook of ``execute_ifc_code``.

Runs inside the sandboxed child (``Worker(setup="buildbench.suites.bimedit.namespace:setup")``),
so it imports nothing of buildbench beyond the sandbox types. It opens the episode's working
copy of the model and binds the names the paper's tool description promises (spec 1.3):
``ifc``, ``ifcopenshell``, ``api``, ``util``, ``element_util``, ``guid``, ``result`` and
``commit()``. ``commit()`` writes the model back to the working copy; that file is what gets
scored.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

#: ``ifcopenshell.api`` submodules bound up front: ``import ifcopenshell.api`` alone does not make
#: them attributes, so ``api.root.create_entity`` would fail (spec 6.2, observed pitfall).
API_MODULES = ("aggregate", "attribute", "boundary", "context", "feature", "geometry", "material",
               "owner", "profile", "project", "pset", "root", "spatial", "style", "type", "unit")
#: ``ifcopenshell.util`` submodules bound up front, for the same reason.
UTIL_MODULES = ("element", "placement", "representation", "selector", "shape_builder", "unit")


def _import_all() -> Any:
    import ifcopenshell
    import ifcopenshell.api
    import ifcopenshell.guid
    import ifcopenshell.util

    for name in API_MODULES:
        importlib.import_module(f"ifcopenshell.api.{name}")
    for name in UTIL_MODULES:
        importlib.import_module(f"ifcopenshell.util.{name}")
    return ifcopenshell


def setup(inputs: dict[str, Any]) -> dict[str, Any]:
    """Open ``inputs["model"]`` and return the globals of the agent's code.

    Args:
        inputs: ``{"model": path}``, the working copy (inside the sandbox's work folder).

    Raises:
        FileNotFoundError: the working copy is missing (reported as a setup error).
    """
    ifcopenshell = _import_all()
    path = str(inputs["model"])
    if not os.path.isfile(path):
        raise FileNotFoundError(f"the model {path} is missing")
    namespace: dict[str, Any] = {}

    def commit() -> str:
        """Save ``ifc`` to the model's path (all edits since the last commit become the answer)."""
        model = namespace.get("ifc")
        if not isinstance(model, ifcopenshell.file):
            raise TypeError(f"commit(): ifc must be an ifcopenshell.file, got {type(model).__name__}")
        # Write beside the target and rename, so a crash mid-write never leaves half a model.
        partial = os.path.join(os.path.dirname(path), ".commit-partial.ifc")
        # the bytes model.write gives an .ifc file, in about half its time on big models
        with open(partial, "wb") as fh:
            fh.write(model.to_string().encode())
        os.replace(partial, path)
        return f"committed to {path}"

    namespace.update({
        "ifc": ifcopenshell.open(path),
        "ifcopenshell": ifcopenshell,
        "api": ifcopenshell.api,
        "util": ifcopenshell.util,
        "element_util": ifcopenshell.util.element,
        "guid": ifcopenshell.guid,
        "result": None,
        "commit": commit,
        "MODEL_PATH": path,
    })
    return namespace
