"""A run started by a script's top-level code, which every episode's process would run again.

Episodes play in processes started from the ``forkserver`` (`buildbench.harness.isolated`, the
runner's pool). Such a process first runs the parent's main script again, as ``__mp_main__``, so
that what the script defines can be unpickled there; ``python -m pkg`` (a ``__main__`` module)
and an interactive session are left alone. A script that calls ``Runner(...).run()`` outside an
``if __name__ == "__main__":`` block therefore starts the run again inside each episode's
process, which fails there (the run folder exists, or multiprocessing's "bootstrapping phase"
RuntimeError), and every episode came out as an unscored ``error`` that hid the cause. The
runner refuses such a run before it starts: `check_main_guard`.
"""

from __future__ import annotations

import ast
import sys
from types import FrameType, ModuleType

from .errors import ConfigError


def check_main_guard() -> None:
    """Refuse a run started by main-script code that an episode's process runs again.

    Raises:
        ConfigError: naming the script and the line that started the run.
    """
    main = sys.modules.get("__main__")
    path = _rerun_path(main) if main is not None else None
    if main is None or path is None:
        return
    frame = _top_level_frame(main)
    if frame is None or _guarded(path, frame.f_lineno):
        return
    raise ConfigError(f"{path} line {frame.f_lineno}: the run starts from the script's top level, which "
                      "every episode's process runs again (and would start the run there): put the code "
                      "that runs it under `if __name__ == \"__main__\":`")


def _rerun_path(main: ModuleType) -> str | None:
    """The file of the main module when a forkserver child runs it again (as multiprocessing's
    ``spawn.get_preparation_data`` and ``_fixup_main_from_name`` decide), else None."""
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None and (name == "__main__" or name.endswith(".__main__")):
        return None
    path = getattr(main, "__file__", None)
    return path if isinstance(path, str) else None


def _top_level_frame(main: ModuleType) -> FrameType | None:
    """The frame running the main module's top-level code, when the run was called from it."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals is vars(main):
            return frame
        frame = frame.f_back
    return None


def _guarded(path: str, line: int) -> bool:
    """Whether ``line`` of the script at ``path`` lies in the body of an ``if __name__ ==
    "__main__":`` (a script whose source cannot be read is given the benefit of the doubt)."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_main_test(node.test) and node.body:
            if node.body[0].lineno <= line <= (node.body[-1].end_lineno or node.body[-1].lineno):
                return True
    return False


def _is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return (any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
            and any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides))
