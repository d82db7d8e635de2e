"""The security pass tool (``tools/security_pass.py``) counts what its docstring says."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "security_pass.py"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("security_pass", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_figures_count_tried_contained_hangs_tracebacks_and_data_lost(tool: ModuleType) -> None:
    case = tool.Case
    figures = tool.classify([
        case("a::ok", "an attack", "passed"),
        case("a::slow", "a slow attack", "passed", hang=True),
        case("a::printed", "a CLI traceback", "failed", traceback=True, detail="Traceback in stderr"),
        case("tests/security/test_stores.py::lost", "a store", "failed", data_test=True, detail="episode missing"),
        case("a::skip", "no bwrap", "skipped", detail="needs bwrap"),
    ])
    assert (figures.tried, figures.contained, figures.hangs, figures.tracebacks, figures.data_lost) == (4, 1, 1, 1, 1)
    assert figures.skipped == 1 and figures.skips == {"needs bwrap": 1}
    assert len(figures.failures) == 2


def test_a_pass_over_one_test_file_records_every_case(tool: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "pass.json"
    code = tool.main(["tests/security/test_security_pass.py", "-k", "figures_count", "--json", str(out)])
    assert code == 0
    data = __import__("json").loads(out.read_text())
    assert data["figures"]["tried"] == 1 and data["figures"]["contained"] == 1
    assert data["cases"][0]["attack"] == "test_figures_count_tried_contained_hangs_tracebacks_and_data_lost"
