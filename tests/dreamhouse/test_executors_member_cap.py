"""Both executors count a scene's members before exporting them and refuse more than the
``house_members`` limit there, in the words `parse_document` uses for the exported list (the
20,001-member case of tests/harness/test_agent_failures.py, here with the limit lowered to 3)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from buildbench.suites.dreamhouse.executors import BlenderUnavailable, Executor, make_executor
from buildbench.suites.dreamhouse.model import StructureFormatError, parse_document

#: Three studs beside the factory cube: four members.
FOUR = "import bpy\nfor i in range(3):\n    bpy.ops.mesh.primitive_cube_add(size=1, location=(i, 0, 1))\n"


@pytest.fixture(params=["fast", "blender"], scope="module")
def ex(request: pytest.FixtureRequest) -> Iterator[Executor]:
    try:
        executor = make_executor(request.param)
    except BlenderUnavailable as exc:
        pytest.skip(f"real Blender not installed ({exc}); create it with tools/setup_blender.sh")
    with executor:
        yield executor


def test_over_the_limit_is_refused_unexported_in_the_parsers_words(ex: Executor,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    ex.reset()
    exported = ex.run(FOUR)  # under the default limit: all four exported
    assert exported.ok and exported.refused is None and len(exported.members) == 4
    monkeypatch.setenv("BUILDBENCH_LIMIT_HOUSE_MEMBERS", "3")
    with pytest.raises(StructureFormatError) as parsed:
        parse_document(exported.submission())
    refused = ex.run("pass")
    assert refused.ok and refused.members == []
    assert refused.refused == str(parsed.value) == "4 members, over the limit of 3 (BUILDBENCH_LIMIT_HOUSE_MEMBERS)"
    with pytest.raises(StructureFormatError, match="^4 members, over the limit of 3 "):
        refused.structure()


def test_at_the_limit_every_member_is_exported(ex: Executor, monkeypatch: pytest.MonkeyPatch) -> None:
    ex.reset()
    monkeypatch.setenv("BUILDBENCH_LIMIT_HOUSE_MEMBERS", "4")
    r = ex.run(FOUR)
    assert r.ok and r.refused is None and len(r.structure()) == 4


def test_a_loaded_scene_over_the_limit_is_refused_too(ex: Executor, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    ex.reset()
    assert ex.run(FOUR).ok
    saved = ex.save_scene(tmp_path)
    assert saved is not None
    monkeypatch.setenv("BUILDBENCH_LIMIT_HOUSE_MEMBERS", "3")
    loaded = ex.load_scene(saved)
    assert loaded.ok and loaded.members == [] and loaded.refused is not None
    assert loaded.refused.startswith("4 members, over the limit of 3")


# The script owns its process, so it can forge the reply (as in tests/security/
# test_hostile_sandbox_dreamhouse.py): a count the harness would not have refused, or one beside
# exported members, is a malformed reply, never a refusal in the harness's words.
FORGE = """
import json as _j, buildbench.sandbox._session as _s
_orig = _s._Session._collect
def _once(self):
    _s._Session._collect = _orig
    return {{"status": "ok", "result_json": _j.dumps({reply})}}
_s._Session._collect = _once
"""


@pytest.mark.parametrize("reply,named", [
    ('{"status": "ok", "members": [], "over_limit": 3}', "'over_limit' 3 with 0 members exported (limit 3)"),
    ('{"status": "ok", "members": [{}], "over_limit": 9}', "'over_limit' 9 with 1 members exported (limit 3)"),
    ('{"status": "ok", "members": [], "over_limit": "9"}', "field 'over_limit' is a string"),
])
def test_a_forged_count_is_a_malformed_reply(reply: str, named: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDBENCH_LIMIT_HOUSE_MEMBERS", "3")
    with make_executor("fast") as fast:
        out = fast.run(FORGE.format(reply=reply))
    assert out.status == "crash" and "malformed reply" in (out.error or "") and named in (out.error or ""), out
    assert out.refused is None and out.members == []
