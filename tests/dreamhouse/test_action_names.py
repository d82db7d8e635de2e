"""Member names sent as JSON or tool calls are names Blender can hold as given: the env's next scene rebuild
must not cut or rename them (a NUL ends a Blender name; it keeps at most 255 bytes of UTF-8)."""

from __future__ import annotations

import pytest

from buildbench.suites.dreamhouse import actions
from buildbench.suites.dreamhouse.model import Structure


def _entry(name: str) -> dict[str, object]:
    return {"name": name, "size": [0.1, 0.1, 2.0], "location": [0.0, 0.0, 1.0]}


@pytest.mark.parametrize("name", ["Stud_" + "x" * 251, "é" * 127 + "ab", "Post\x00z"])
def test_a_name_blender_would_cut_is_one_error(name: str) -> None:
    with pytest.raises(actions.ActionError, match=r"NUL|bytes of UTF-8"):
        actions.parse_members([_entry(name)])


def test_names_up_to_the_limit_are_kept_whole() -> None:
    for name in ("Stud_1", "x" * 255, "é" * 127):
        assert actions.parse_members([_entry(name)])[0].name == name


def test_a_rename_to_a_name_blender_would_cut_is_refused() -> None:
    scene = Structure.from_members(actions.parse_members([_entry("Stud_1")]))
    with pytest.raises(actions.ActionError, match="'new_name' is 300 bytes"):
        actions.modify_members(scene, [{"name": "Stud_1", "new_name": "y" * 300}])
    assert scene.names == ("Stud_1",)
