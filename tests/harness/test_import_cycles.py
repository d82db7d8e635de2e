"""No suite has an import cycle (``tools/import_cycles.py``), neither at module level nor one
hidden by a function-level import, and the tool finds the cycles a function-level import hides."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "import_cycles.py"
SUITES = ["bimedit", "buildarena", "dreamhouse", "example", "legoeval", "scenerevis"]


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_cycles", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("suite", SUITES)
def test_no_suite_has_a_module_level_import_cycle(tool: ModuleType, suite: str) -> None:
    assert tool.cycles(tool.suite_edges(suite), module_level_only=True) == []


# Hidden cycles not removed yet (issue 16), as the groups the tool reports, modules relative to
# the suite; none is left. Pinned, so a new hidden cycle fails here, and so does removing one
# until it leaves this table.
KNOWN_HIDDEN: dict[str, list[list[str]]] = {}


@pytest.mark.parametrize("suite", SUITES)
def test_no_suite_has_a_cycle_hidden_by_a_function_level_import(tool: ModuleType, suite: str) -> None:
    known = [[f"buildbench.suites.{suite}.{m}" for m in group] for group in KNOWN_HIDDEN.get(suite, [])]
    assert tool.cycles(tool.suite_edges(suite), module_level_only=False) == known


def test_a_cycle_through_a_function_level_import_is_reported_as_hidden(tool: ModuleType) -> None:
    a, b = "buildbench.suites.x.a", "buildbench.suites.x.b"
    edges = [tool.Edge(a, b, True), tool.Edge(b, a, False)]
    assert tool.cycles(edges, module_level_only=True) == []
    assert tool.cycles(edges, module_level_only=False) == [[a, b]]
    assert tool.shortest_cycle(edges, [a, b]) == [a, b]
