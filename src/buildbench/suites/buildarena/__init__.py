"""``buildarena``: Besiege-style block machines built with a geometry library, judged by MuJoCo simulation.

The suite object loads on first access (registry import string
``buildbench.suites.buildarena:buildarena_suite``), so code that only needs the library or the
catalogue does not import the simulator or the model clients. (It is not called ``suite``: that
name is the ``suite`` submodule's, which Python binds on the package once it is imported.)
"""

from typing import Any

__all__ = ["buildarena_suite"]


def __getattr__(name: str) -> Any:
    if name == "buildarena_suite":
        from .suite import suite

        return suite
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
