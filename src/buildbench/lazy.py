"""Package attributes loaded on first use (PEP 562), so importing a package stays cheap.

A package whose ``__init__`` re-exports names from heavy submodules (SciPy, the run
machinery) lists them here instead of importing them: ``buildbench --help`` then loads only
what it shows. The package keeps the real imports under ``TYPE_CHECKING`` for type checkers.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, names: Mapping[str, tuple[str, ...]]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` exporting ``names`` (submodule -> its names).

    The first look-up of a name imports its submodule and stores the value in the package,
    so later look-ups are ordinary attribute reads.
    """
    where = {name: module for module, exported in names.items() for name in exported}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__
