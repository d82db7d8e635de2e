"""The DreamHouse env: the three action formats, persistence, explicit reset, bad actions."""

from __future__ import annotations

import json

import pytest

from buildbench.harness import Action, get_suite
from buildbench.harness.errors import ConfigError
from buildbench.llm import ToolCall
from buildbench.suites.dreamhouse.agents import member_entries
from buildbench.suites.dreamhouse.env import DreamHouseEnv, make_env, phase_runs
from buildbench.suites.dreamhouse.model import Member, Structure
from buildbench.suites.dreamhouse.options import DreamHouseOptions
from buildbench.suites.dreamhouse.scripts import euler_xyz, fenced, structure_to_bpy
from buildbench.suites.dreamhouse.tasks import load_tasks, make_task, target_structure

TASK = "RN_01_0001"


@pytest.fixture(scope="module")
def task():
    return make_task(TASK)


@pytest.fixture()
def env(task):
    e = make_env(task, DreamHouseOptions(images="off"))
    e.reset(task)
    yield e
    e.close()


def _json(members, replace=False) -> Action:
    return Action(text="```json\n" + json.dumps({"members": members, "replace": replace}) + "\n```")


SILL = {"name": "Sill_a", "size": [4.0, 0.14, 0.038], "location": [2.0, 0.07, 0.019]}


def test_tasks_carry_the_paper_context_and_ids():
    tasks = load_tasks("demo")
    assert len(tasks) == 13 and len({t.metadata["style"] for t in tasks}) == 13
    assert {t.metadata["roof_type"] for t in tasks} == {"gable", "hip", "gambrel", "shed"}
    t = tasks[0]
    lot = t.inputs["lot_size"]
    assert lot["area"] == round(lot["width"] * lot["depth"], 2)
    assert lot["width"] == pytest.approx(t.inputs["footprint"]["x"] + 2.0)
    assert t.target["n_members"] == len(target_structure(t))
    with pytest.raises(ConfigError, match="split"):
        load_tasks("nope")


def test_reset_prompt_has_context_rules_schema_and_collection(task):
    env = make_env(task, DreamHouseOptions(images="off"))
    obs, info = env.reset(task)
    lot = task.inputs["lot_size"]
    assert f"{lot['width']:.2f}m x {lot['depth']:.2f}m, area {lot['area']:.2f}m^2" in obs.text
    for needle in ("CenterBeam", "GableStud", "construction_order", "depends_on", f'"{TASK}"', "front-right"):
        assert needle in obs.text
    assert obs.images == [] and info["n_images"] == 0
    assert "{{" not in obs.text and "}}" not in obs.text


def test_options_are_checked_once_and_read_by_the_env(task):
    suite = get_suite("dreamhouse")
    with pytest.raises(ConfigError, match=r"^option executor='maya': expected one of fast, blender$"):
        suite.parse_options({"executor": "maya"})
    with pytest.raises(ConfigError, match="unknown option 'other' for suite 'dreamhouse'"):
        suite.parse_options({"profile": "released", "other": 1})
    env = make_env(task, suite.parse_options({"profile": "released", "condition": "facade"}))
    assert (env.options.profile, env.options.condition, env.options.executor) == ("released", "facade", "fast")


def test_json_members_persist_and_replace(env):
    r = env.step(_json([SILL]))
    assert len(env.structure) == 1 and r.info["tests"]["load_path"] and not r.terminated
    env.step(_json([{**SILL, "name": "Sill_b", "location": [2.0, 3.0, 0.019]}]))
    assert env.structure.names == ("Sill_a", "Sill_b")
    env.step(_json([SILL], replace=True))
    assert env.structure.names == ("Sill_a",)
    env.reset_scene()
    assert len(env.structure) == 0


@pytest.mark.parametrize("text,needle", [
    ("", "empty action"),
    ("I will build a house.", "no Blender Python"),
    ("```json\n{\"members\": [}\n```", "not valid JSON"),
    ('{"blocks": []}', '{"members"'),
    ('{"members": [{"name": "Sill_x", "size": [1, -1, 1], "location": [0, 0, 0]}]}', "members[0] (Sill_x): every 'size'"),
    ('{"members": [{"name": "Sill_x", "size": [1, 1, 1]}]}', "missing 'location'"),
    ('{"members": [{"name": "Sill_x", "size": [1, 1, 1], "location": [0, 0, "a"]}]}', "finite numbers"),
    ('{"members": [{"name": "Sill_a", "size": [1, 1, 1], "location": [0, 0, 0]}]}', "already has member(s) named Sill_a"),
])
def test_bad_text_and_json_actions_lose_nothing(env, text, needle):
    env.step(_json([SILL]))
    before = env.structure
    r = env.step(Action(text=text))
    assert needle in r.observation.text
    assert "scene is unchanged (1 members)" in r.observation.text
    assert env.structure is before and r.reward == 0.0 and env.invalid_actions == 1


def test_tool_calls_add_modify_remove_validate_and_their_errors(env):
    calls = [
        ToolCall("1", "add_members", {"members": [SILL, {**SILL, "name": "Sill_b"}]}),
        ToolCall("2", "modify_members", {"changes": [{"name": "Sill_b", "location": [2.0, 3.0, 0.019],
                                                      "new_name": "Sill_c"}]}),
        ToolCall("3", "remove_members", {"names": ["Sill_a"]}),
        ToolCall("4", "remove_members", {"names": ["Sill_zz"]}),
        ToolCall("5", "frobnicate", {}),
        ToolCall("6", "add_members", {}, "{oops", "Expecting property name"),
        ToolCall("7", "modify_members", {"changes": [{"name": "Sill_c", "colour": "red"}]}),
        ToolCall("8", "validate", {}),
    ]
    r = env.step(Action(tool_calls=calls))
    answers = dict(r.observation.tool_results)
    assert answers["1"].startswith("OK: the scene has 2 members")
    assert env.structure.names == ("Sill_c",)
    assert env.structure.centers_m[0, 1] == pytest.approx(3.0)
    assert "no member(s) named Sill_zz" in answers["4"]
    assert "unknown tool 'frobnicate'" in answers["5"]
    assert "not a JSON object" in answers["6"]
    assert "unknown field(s) colour" in answers["7"]
    assert "[VALIDATION FAILED]" in answers["8"] and "roof_coverage" in answers["8"]
    assert env.invalid_actions == 4
    env.step(Action(tool_calls=[ToolCall("9", "reset_scene", {})]))
    assert len(env.structure) == 0


def test_euler_round_trip_and_script_emission():
    import numpy as np

    from buildbench.suites.dreamhouse.model import euler_xyz_matrix

    rng = np.random.default_rng(0)
    for angles in [*rng.uniform(-3, 3, (50, 3)), (0.3, np.pi / 2, 0.2), (0.3, -np.pi / 2, 0.2)]:
        r = euler_xyz_matrix(angles)
        assert np.allclose(euler_xyz_matrix(euler_xyz(r)), r)
    s = Structure.from_members([Member.box("Rafter_1", (3, 0.038, 0.184), (1, 2, 3), (0.0, 0.6, 0.0))])
    code = structure_to_bpy(s, "C1", clear=True)
    assert "bpy.data.objects.remove" in code and "'Rafter_1'" in code
    entry = member_entries(s)[0]
    assert entry["rotation_euler"][1] == pytest.approx(0.6)


def test_phase_runs_follow_creation_order(task):
    s = target_structure(task)
    runs = phase_runs(s)
    assert runs[0][0] == "foundation" and runs[-1] == ("roof", len(s))
    assert [p for p, _ in runs[:4]] == ["foundation", "floor", "walls", "roof"]


@pytest.mark.timeout(120)
def test_python_actions_in_the_fast_executor_persist_fail_safely_and_resync(task):
    env = DreamHouseEnv(task, DreamHouseOptions(images="off"))
    env.reset(task)
    try:
        truth = target_structure(task)
        r = env.step(Action(text=fenced(structure_to_bpy(truth, env.collection))))
        assert r.terminated and r.reward == 1.0 and len(env.structure) == len(truth)
        # The scene persists: the same script again duplicates every member (Blender renames them).
        env.step(Action(text=fenced(structure_to_bpy(truth, env.collection))))
        assert len(env.structure) == 2 * len(truth)
        assert env.structure.names[len(truth)] == truth.names[0] + ".001"
        # A failing script is not saved, and an unsupported API is named.
        before = env.structure
        r = env.step(Action(text="```python\nimport bpy\nbpy.ops.mesh.primitive_cube_add(size=1)\n1/0\n```"))
        assert "[ERROR] Blender failed" in r.observation.text and "ZeroDivisionError" in r.observation.text
        assert env.structure is before and env.script_errors == 1
        r = env.step(Action(text="```python\nimport bpy\nbpy.ops.mesh.primitive_torus_add()\n```"))
        assert "primitive_torus_add is not supported" in r.observation.text
        # After a JSON edit the executor's scene is rebuilt before the next script.
        env.step(_json([SILL], replace=True))
        r = env.step(Action(data={"code": "import bpy\nprint(len(bpy.data.collections['RN_01_0001'].objects))"}))
        assert env.structure.names == ("Sill_a",)
        assert r.info["n_members"] == 1
        # Even a NaN-sized member an agent made survives a rebuild of the executor's scene.
        env.step(Action(data={"code": "import bpy\nbpy.ops.mesh.primitive_cube_add(size=1)\n"
                                      "o = bpy.context.active_object\no.name = 'Post_nan'\n"
                                      "o.scale = (float('nan'), 1, 1)\n"
                                      "bpy.data.collections['RN_01_0001'].objects.link(o)"}))
        env.step(_json([{**SILL, "name": "Sill_b"}]))
        r = env.step(Action(data={"code": "import bpy"}))
        assert env.structure.names == ("Sill_a", "Post_nan", "Sill_b"), r.observation.text
        assert r.info["tests"]["member_integrity"] is False
    finally:
        env.close()


def test_task_lists_are_cached_and_equal_to_fresh_ones(tmp_path, monkeypatch):
    from buildbench.suites.dreamhouse.tasks import load_tasks

    monkeypatch.setenv("BUILDBENCH_CACHE", str(tmp_path))
    fresh = load_tasks("demo")
    files = list(tmp_path.rglob("demo.jsonl"))
    assert len(files) == 1
    cached = load_tasks("demo")
    assert [t.to_dict() for t in cached] == [t.to_dict() for t in fresh]
    files[0].write_text("not json\n")  # a damaged cache is rebuilt, not trusted
    assert [t.to_dict() for t in load_tasks("demo")] == [t.to_dict() for t in fresh]
