"""The SceneReVis README's option table is generated from ``SceneReVisOptions`` by
tools/options_doc.py (between its markers) and stays equal to what the class says."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from buildbench.harness import COMMON_OPTIONS
from buildbench.suites.scenerevis.options import SceneReVisOptions

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "src" / "buildbench" / "suites" / "scenerevis" / "README.md"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("options_doc", ROOT / "tools" / "options_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("options_doc", module)
    spec.loader.exec_module(module)
    return module


def _section(text: str, tool: ModuleType) -> str:
    return text[text.index(tool.BEGIN):text.index(tool.END)]


def test_the_readme_table_is_what_the_options_class_says(tool: ModuleType) -> None:
    expected = tool.expected_files()
    assert README in expected, "the SceneReVis README lost its options markers"
    assert README.read_text(encoding="utf-8") == expected[README], \
        "the SceneReVis README's options are stale: run python tools/options_doc.py"


def test_the_table_has_a_row_per_own_option_and_links_the_common_ones(tool: ModuleType) -> None:
    section = _section(README.read_text(encoding="utf-8"), tool)
    rows = re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE)
    common = {spec.name for spec in COMMON_OPTIONS}
    assert rows == [spec.name for spec in SceneReVisOptions.specs if spec.name not in common]
    for spec in SceneReVisOptions.specs:
        if spec.name not in common:
            assert f"| `{spec.name}` | {spec.describe().replace('|', chr(92) + '|')} |" in section, spec.name
    (link,) = re.findall(r"\]\(([^)#]+)#common-model-options\)", section)
    assert "## Common model options" in (README.parent / link).resolve().read_text(encoding="utf-8")


def test_a_changed_option_makes_the_section_stale_and_only_the_section_is_rewritten(tool: ModuleType) -> None:
    text = README.read_text(encoding="utf-8")
    stale = text.replace("replies per episode, turn 0 included", "replies per episode")
    assert stale != text
    assert tool.with_section(stale, _section(text, tool) + tool.END, README) == text
    before, after = text.split(tool.BEGIN)[0], text.split(tool.END)[1]
    rewritten = tool.with_section(text, f"{tool.BEGIN}\nX\n{tool.END}", README)
    assert rewritten == f"{before}{tool.BEGIN}\nX\n{tool.END}{after}"


@pytest.mark.parametrize("broken", ["no markers", "<!-- /options -->\n{begin}", "{begin}\n{begin}\n<!-- /options -->"])
def test_misplaced_markers_are_refused(tool: ModuleType, broken: str) -> None:
    with pytest.raises(ValueError, match="README.md: expected one"):
        tool.with_section(broken.format(begin=tool.BEGIN), "x", README)
