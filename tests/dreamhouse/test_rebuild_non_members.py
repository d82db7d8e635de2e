"""The agent's whole Blender scene persists, as the released harness's saved ``.blend`` does:
objects that are not members (a helper outside the task's collection, the factory objects it
deleted) are the same after the env rebuilds its executor's scene (after a failed script, a
JSON edit, a restored checkpoint, in a fresh process) as they would be without the rebuild."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from buildbench.harness import Action, StepResult
from buildbench.suites.dreamhouse.env import DreamHouseEnv
from buildbench.suites.dreamhouse.executors import BlenderUnavailable, find_blender_python
from buildbench.suites.dreamhouse.model import Member, Structure
from buildbench.suites.dreamhouse.options import DreamHouseOptions
from buildbench.suites.dreamhouse.scene_history import SceneHistory
from buildbench.suites.dreamhouse.scripts import structure_to_bpy
from buildbench.suites.dreamhouse.tasks import make_task

TASK = "RN_01_0001"
MEMBER = """
bpy.ops.mesh.primitive_cube_add(size=1, location={location})
obj = bpy.context.active_object
obj.name = {name!r}
for other in list(obj.users_collection):
    other.objects.unlink(obj)
coll.objects.link(obj)
"""
# Deletes the factory Cube, keeps a helper cube 'Guide' in the scene's own collection (not a
# member) and builds two members in the task's collection.
BUILD = ("import bpy\nbpy.data.objects.remove(bpy.data.objects['Cube'], do_unlink=True)\n"
         "bpy.ops.mesh.primitive_cube_add(size=1, location=(9, 9, 9))\nbpy.context.active_object.name = 'Guide'\n"
         "coll = bpy.data.collections.new('RN_01_0001')\nbpy.context.scene.collection.children.link(coll)\n"
         + MEMBER.format(location=(0, 0, 0.5), name="Post_1") + MEMBER.format(location=(2, 0, 0.5), name="Post_2"))
# Fails (the step is refused) unless the scene is as BUILD left it, members aside.
CHECK = ("import bpy\nassert 'Guide' in bpy.data.objects, 'the helper is gone'\n"
         "assert 'Cube' not in bpy.data.objects, 'the factory Cube is back'\n"
         "assert bpy.data.objects['Guide'].location[0] == 9\n")
BREAK = ("import buildbench.suites.dreamhouse.executors.fakebpy._api as api\n"
         "def broken(self, name):\n    raise ValueError('tampered')\n"
         "api.OpsModule.__getattr__ = broken\nraise ValueError('now rebuild')\n")


@pytest.fixture(params=["fast", "blender"])
def env(request: pytest.FixtureRequest) -> Iterator[DreamHouseEnv]:
    if request.param == "blender":
        try:
            find_blender_python()
        except BlenderUnavailable as exc:
            pytest.skip(f"real Blender not installed ({exc}); create it with tools/setup_blender.sh")
    task = make_task(TASK)
    made = DreamHouseEnv(task, DreamHouseOptions(images="off", executor=request.param))
    made.reset(task)
    yield made
    made.close()


def _code(env: DreamHouseEnv, code: str) -> StepResult:
    return env.step(Action(data={"code": code}))


def _fail(env: DreamHouseEnv) -> None:
    # Its changes before the error (a member added, the helper moved) are not kept.
    result = _code(env, "import bpy\nbpy.data.objects['Guide'].location = (0, 0, 0)\n"
                        "bpy.ops.mesh.primitive_cube_add(size=1)\nraise ValueError('x')")
    assert "[ERROR]" in result.observation.text


def _json_edit(env: DreamHouseEnv) -> None:
    env.step(Action(data={"members": [{"name": "Post_3", "size": [0.1, 0.1, 2], "location": [4, 0, 1]}]}))


def _edit_and_restore(env: DreamHouseEnv) -> None:
    saved = env.checkpoint()
    _json_edit(env)
    env.restore(saved)


def _break_process(env: DreamHouseEnv) -> None:
    if env.options.executor != "fast":
        pytest.skip("the process-breaking script patches the fast executor's bpy")
    _code(env, BREAK)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("rebuild", [_fail, _json_edit, _edit_and_restore, _break_process],
                         ids=["failed", "json edit", "restored", "restarted"])
def test_objects_that_are_not_members_stay_across_a_rebuild(env: DreamHouseEnv,
                                                            rebuild: Callable[[DreamHouseEnv], None]) -> None:
    _code(env, BUILD)
    assert env.structure.names == ("Post_1", "Post_2")
    rebuild(env)
    members = env.structure.names
    checked = _code(env, CHECK)
    assert "[ERROR]" not in checked.observation.text, checked.observation.text
    assert env.structure.names == members
    assert members == (("Post_1", "Post_2", "Post_3") if rebuild is _json_edit else ("Post_1", "Post_2"))


@pytest.mark.timeout(240)
def test_reset_scene_empties_the_whole_scene(env: DreamHouseEnv) -> None:
    _code(env, BUILD)
    env.reset_scene()
    checked = _code(env, "import bpy\nassert 'Guide' not in bpy.data.objects\nassert 'Cube' in bpy.data.objects\n")
    assert "[ERROR]" not in checked.observation.text, checked.observation.text
    assert env.structure.names == ("Cube",)  # no task collection: the released exporter's fallback


@pytest.mark.timeout(240)
def test_a_script_that_does_not_replay_the_same_keeps_the_whole_scene(env: DreamHouseEnv) -> None:
    """A script that reads the clock would build elsewhere if run again: the env opens the scene it
    saved instead, members and other objects as the agent left them (see ``test_replay.py``)."""
    _code(env, BUILD)
    _code(env, "import bpy, time\ncoll = bpy.data.collections['RN_01_0001']\n"
               + MEMBER.format(location="(time.time() % 1000, 0, 0.5)", name="Post_3"))
    before = env.structure
    _fail(env)
    checked = _code(env, CHECK)
    assert "[ERROR]" not in checked.observation.text, checked.observation.text
    assert env.structure.names == before.names and (env.structure.centers_m == before.centers_m).all()


def test_edits_in_a_row_keep_one_members_rebuild() -> None:
    """A JSON or tools episode edits at every step: the history keeps the last rebuild only."""
    history = SceneHistory("C1")
    for n in range(1, 6):
        last = Structure.from_members([Member.box(f"Post_{k}", (1, 1, 1), (k, 0, 0.5), (0, 0, 0)) for k in range(n)])
        history.edited(last)
    assert history.edit == structure_to_bpy(last, "C1", clear=True)
    history.reset()
    assert history.edit is None and history.saved is None and history.state == "reset"


#: BUILD with the members in a collection of the agent's naming: no collection of the task's name,
#: so the exporter reads the members from the collection holding the most meshes ('Agent').
BUILD_ELSEWHERE = BUILD.replace("'RN_01_0001'", "'Agent'")
#: Fails unless the scene's meshes are exactly the members (objects named Post_*), none twice.
NO_COPIES = ("import bpy\nmeshes = sorted(o.name for o in bpy.data.objects if o.type == 'MESH')\n"
             "assert meshes == sorted(['Guide', *{names!r}]), meshes\n")


@pytest.mark.timeout(240)
@pytest.mark.parametrize("edit", [
    {"members": [{"name": "Post_3", "size": [0.1, 0.1, 2], "location": [4, 0, 1]}], "replace": True},
    {"members": [{"name": "Post_3", "size": [0.1, 0.1, 2], "location": [4, 0, 1]}]},
], ids=["replace", "add"])
def test_a_members_rebuild_leaves_no_copy_in_the_agents_collection(env: DreamHouseEnv, edit: dict[str, object]) -> None:
    _code(env, BUILD_ELSEWHERE)
    assert env.structure.names == ("Post_1", "Post_2")
    env.step(Action(data=edit))
    members = env.structure.names
    assert members == (("Post_3",) if edit.get("replace") else ("Post_1", "Post_2", "Post_3"))
    checked = _code(env, NO_COPIES.format(names=list(members)))
    assert "[ERROR]" not in checked.observation.text, checked.observation.text
    assert env.structure.names == members
