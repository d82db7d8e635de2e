"""Getting the scene back after a lost executor process repeats nothing the agent's scripts did.

Scripts run in the executor's process and may do more than build: append to a file of the work
folder and build from its length, draw random numbers, read the clock. When that process is lost
(the script crashed or was killed, or it failed and left a half-built scene), the env opens the
scene it saved after the last accepted script in a fresh process instead of running the scripts
again: the scene and the work folder are those the agent saw, and an episode's record is the same
with and without the crash.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import pytest

from buildbench.harness import Action, StepResult
from buildbench.suites.dreamhouse.env import DreamHouseEnv
from buildbench.suites.dreamhouse.executors import BlenderUnavailable, find_blender_python
from buildbench.suites.dreamhouse.options import DreamHouseOptions
from buildbench.suites.dreamhouse.tasks import make_task

TASK = "RN_01_0001"
_MEMBER = """
bpy.ops.mesh.primitive_cube_add(size=1, location={location})
obj = bpy.context.active_object
obj.name = {name}
for other in list(obj.users_collection):
    other.objects.unlink(obj)
coll.objects.link(obj)
"""
_COLLECTION = ("coll = bpy.data.collections.get('RN_01_0001')\nif coll is None:\n"
               "    coll = bpy.data.collections.new('RN_01_0001')\n    bpy.context.scene.collection.children.link(coll)\n")
#: Appends to a file of the work folder and builds a post whose place and name follow the file's length.
APPEND = ("import bpy, os\nwith open('log.txt', 'a') as f:\n    f.write('x')\nn = os.path.getsize('log.txt')\n"
          + _COLLECTION + _MEMBER.format(location="(2 * n, 0, 0.5)", name="f'Post_{n}'"))
#: A post placed by an unseeded random number and the clock, and a helper (not a member) placed the same way.
RANDOM = ("import bpy, random, time\n" + _COLLECTION
          + _MEMBER.format(location="(random.random() * 10, time.time() % 100, 0.5)", name="'Post_r'")
          + "bpy.ops.mesh.primitive_cube_add(size=1, location=(-5, random.random(), time.time() % 100))\n"
            "bpy.context.active_object.name = 'Guide'\n")
#: Ends its own process in the middle of a script that changed the scene.
KILL = ("import bpy, os, signal\nbpy.ops.mesh.primitive_cube_add(size=1)\n"
        "bpy.data.objects['Cube'].location = (50, 50, 50)\nos.kill(os.getpid(), signal.SIGKILL)\n")
#: Changes the scene, then fails: its process lives on, holding a scene that is not the agent's.
FAIL = "import bpy\nbpy.ops.mesh.primitive_cube_add(size=1)\nbpy.data.objects['Cube'].location = (50, 50, 50)\nraise ValueError('x')"
#: Breaks the process for later scripts (the fast executor's ``bpy.ops``), then fails.
BREAK = ("import buildbench.suites.dreamhouse.executors.fakebpy._api as api\n"
         "def broken(self, name):\n    raise ValueError('tampered')\n"
         "api.OpsModule.__getattr__ = broken\nraise ValueError('now rebuild')\n")


def _env(executor: str) -> DreamHouseEnv:
    kind: Literal["fast", "blender"] = "fast"
    if executor == "blender":
        try:
            find_blender_python()
        except BlenderUnavailable as exc:
            pytest.skip(f"real Blender not installed ({exc}); create it with tools/setup_blender.sh")
        kind = "blender"
    task = make_task(TASK)
    env = DreamHouseEnv(task, DreamHouseOptions(images="off", executor=kind))
    env.reset(task)
    return env


@pytest.fixture(params=["fast", "blender"])
def executor(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def envs(executor: str) -> Iterator[Callable[[], DreamHouseEnv]]:
    made: list[DreamHouseEnv] = []

    def make() -> DreamHouseEnv:
        made.append(_env(executor))
        return made[-1]

    yield make
    for env in made:
        env.close()


def _code(env: DreamHouseEnv, code: str) -> StepResult:
    return env.step(Action(data={"code": code}))


def _work_file(env: DreamHouseEnv, name: str) -> str:
    return (Path(env._executor._worker.workdir) / name).read_text()


def _kill(env: DreamHouseEnv) -> None:
    assert "[ERROR]" in _code(env, KILL).observation.text


def _fail(env: DreamHouseEnv) -> None:
    assert "[ERROR]" in _code(env, FAIL).observation.text


def _break(env: DreamHouseEnv) -> None:
    if env.options.executor != "fast":
        pytest.skip("the process-breaking script patches the fast executor's bpy")
    assert "[ERROR]" in _code(env, BREAK).observation.text


LOSSES = pytest.mark.parametrize("lose", [_kill, _fail, _break], ids=["killed", "failed", "broken"])


@pytest.mark.timeout(300)
@LOSSES
def test_a_lost_scene_comes_back_without_running_the_scripts_again(envs: Callable[[], DreamHouseEnv],
                                                                   lose: Callable[[DreamHouseEnv], None]) -> None:
    plain, crashed = envs(), envs()
    seen = [_code(plain, APPEND).observation.text for _ in range(3)]
    again = [_code(crashed, APPEND).observation.text for _ in range(2)]
    lose(crashed)
    again.append(_code(crashed, APPEND).observation.text)
    # The third script found the file as the agent left it ('xx', not 'xxxx'), so it built Post_3 at x = 6.
    assert _work_file(crashed, "log.txt") == _work_file(plain, "log.txt") == "xxx"
    assert crashed.structure.names == plain.structure.names == ("Post_1", "Post_2", "Post_3")
    assert (crashed.structure.centers_m == plain.structure.centers_m).all()
    assert again == seen
    record, plain_record = crashed.outcome().to_dict(), plain.outcome().to_dict()
    for key in ("attempts", "script_errors"):  # the losing step is the one difference
        record.pop(key), plain_record.pop(key)
    assert record == plain_record


@pytest.mark.timeout(300)
@LOSSES
def test_random_numbers_and_the_clock_are_not_drawn_again(envs: Callable[[], DreamHouseEnv],
                                                          lose: Callable[[DreamHouseEnv], None]) -> None:
    env = envs()
    built = _code(env, RANDOM)
    before = env.structure
    guide = "import bpy\nprint(tuple(round(v, 4) for v in bpy.data.objects['Guide'].location))\n"
    where = env._executor.run(guide).stdout
    lose(env)
    after = _code(env, "import bpy")
    assert after.observation.text == built.observation.text
    assert env.structure.names == before.names == ("Post_r",)
    assert (env.structure.matrices == before.matrices).all()
    assert env._executor.run(guide).stdout == where  # the helper, not a member, is where it was


@pytest.mark.timeout(300)
def test_an_edit_after_the_last_script_is_made_again_on_the_saved_scene(envs: Callable[[], DreamHouseEnv]) -> None:
    env = envs()
    _code(env, APPEND)
    env.step(Action(data={"members": [{"name": "Beam_1", "size": [2, 0.1, 0.1], "location": [1, 0, 2]}]}))
    edited = env.structure
    _kill(env)
    _code(env, "import bpy\nassert open('log.txt').read() == 'x'\n")
    assert env.structure.names == edited.names == ("Post_1", "Beam_1")
    assert (env.structure.matrices == edited.matrices).all()


@pytest.mark.timeout(300)
def test_the_saved_scene_is_out_of_the_agents_reach(envs: Callable[[], DreamHouseEnv]) -> None:
    """The saved scene lives outside the work folder, and a script cannot leave a file there
    that the env would later take for it (its name is new each time)."""
    env = envs()
    _code(env, APPEND)
    saved = env._history.saved
    assert saved is not None and saved.is_file()
    workdir = Path(env._executor._worker.workdir)
    assert workdir not in saved.parents and not any(p.name.startswith(".buildbench-scene") for p in workdir.iterdir())
    # The agent lists, overwrites and plants every file it can see; the scene comes back as saved.
    _code(env, "import os\nfor name in os.listdir('.'):\n    open(name, 'a').write('garbage')\n"
               "open('.buildbench-scene-0000000000000000', 'w').write('garbage')\n")
    _fail(env)
    _code(env, "import bpy")
    assert env.structure.names == ("Post_1",)
    # One saved scene at a time (the last accepted one), removed with the env.
    assert [p.name for p in saved.parent.iterdir()] == [env._history.saved.name] != [saved.name]
    env.close()
    assert not saved.parent.exists()


def test_a_scene_that_cannot_be_saved_keeps_its_members(envs: Callable[[], DreamHouseEnv]) -> None:
    """An object the fake scene cannot save (a function in a custom property): the members alone come back."""
    env = envs()
    if env.options.executor != "fast":
        pytest.skip("Blender refuses such a property when it is set, not when it saves")
    _code(env, APPEND.replace("coll.objects.link(obj)\n", "coll.objects.link(obj)\nobj['f'] = lambda: 1\n"))
    assert env._history.saved is None
    _fail(env)
    _code(env, "import bpy")
    assert env.structure.names == ("Post_1",)


@pytest.mark.timeout(300)
def test_a_process_killed_between_steps_is_not_the_agents_failure(envs: Callable[[], DreamHouseEnv]) -> None:
    """The env sees the process is gone before the next script and opens the saved scene in a new one:
    the step runs as it would have, and the record is the plain episode's."""
    plain, killed = envs(), envs()

    def step(env: DreamHouseEnv) -> tuple[str, float, bool, dict[str, object]]:
        result = _code(env, APPEND)
        return result.observation.text, result.reward, result.terminated, result.info

    seen = [step(plain) for _ in range(2)]
    again = [step(killed)]
    os.kill(killed._executor._worker._process._popen.pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while killed._executor.running() and time.monotonic() < deadline:
        time.sleep(0.02)  # the kill lands a moment later
    again.append(step(killed))
    assert again == seen and _work_file(killed, "log.txt") == "xx"
    assert killed.outcome().to_dict() == plain.outcome().to_dict()


@pytest.mark.parametrize("plant", [
    "os.symlink('/etc/hostname', name)",  # a link to a file the agent cannot read
    "open('mine', 'w').write('x')\nos.link('mine', name)",  # a second name of a file the agent keeps changing
    "os.mkdir(name)",
], ids=["symlink", "hard link", "folder"])
def test_a_saved_scene_is_kept_only_as_a_plain_file_of_its_own(plant: str, tmp_path: Path) -> None:
    """The process that saves the scene is the agent's: what it leaves under the file's name is
    taken only when it is a plain file no one else holds."""
    from buildbench.suites.dreamhouse.executors import make_executor

    with make_executor("fast", collection="C1") as ex:
        assert ex.run("import bpy").ok
        assert ex._worker.call(f"import os\ndef __save__(name):\n    {plant.replace(chr(10), chr(10) + '    ')}\n"
                               "    return True").ok
        assert ex.save_scene(tmp_path) is None
        assert list(tmp_path.iterdir()) == []


def test_the_saved_scene_folder_is_left_alone_while_in_use_and_removed_when_a_killed_run_left_it(
        envs: Callable[[], DreamHouseEnv], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from buildbench.sandbox.lifetime import clean_stale_workdirs

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    env = envs()
    _code(env, APPEND)
    assert env._history.saved is not None
    folder = env._history.saved.parent
    left = tmp_path / folder.name.replace("scene-", "scene-left-")  # as a killed run leaves one: no lock
    left.mkdir()
    (left / "scene").write_bytes(b"x")
    removed = clean_stale_workdirs(tmp_path, min_age_s=0)
    assert left in removed and folder not in removed and env._history.saved.is_file()


def test_a_worker_says_whether_its_process_still_runs() -> None:
    from buildbench.sandbox import Limits, Worker

    with Worker(limits=Limits(wall_s=30)) as worker:
        assert not worker.running()  # nothing started yet
        assert worker.call("x = 1").ok and worker.running()
        assert worker._process is not None
        os.kill(worker._process._popen.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while worker.running() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not worker.running()
        worker.reset()  # what the DreamHouse env does then (Executor.restart)
        assert not worker.running()
        assert worker.call("result = 2").result == 2 and worker.running()
