"""Reply parsing and tool semantics: absolute values, atomic replies, unique-id addressing."""

from __future__ import annotations

import copy
import json

import pytest

from buildbench.suites.scenerevis.actions import (
    Addressing,
    ReplyError,
    SceneState,
    apply_calls,
    parse_create_scene,
    parse_turn,
)

ROOM = {"room_type": "bedroom", "room_id": "Bedroom-1",
        "bounds_bottom": [[-2, 0, 2], [2, 0, 2], [2, 0, -2], [-2, 0, -2]],
        "bounds_top": [[-2, 2.6, 2], [2, 2.6, 2], [2, 2.6, -2], [-2, 2.6, -2]]}
NIGHTSTAND = {"desc": "Walnut nightstand", "size": [0.5, 0.55, 0.42], "rot": [0, 0, 0, 1], "jid": "ns-model"}


def two_nightstands() -> SceneState:
    """A room whose two nightstands share one asset jid, as real rooms do."""
    return SceneState.from_flat({**ROOM, "objects": [
        {**NIGHTSTAND, "pos": [-1.2, 0, -1.7]}, {**NIGHTSTAND, "pos": [1.2, 0, -1.7]},
        {"desc": "Queen bed", "size": [1.6, 0.5, 2.0], "pos": [0, 0, -0.9], "rot": [0, 0, 0, 1], "jid": "bed-1"}]})


def reply(*calls: dict) -> str:
    return f"<think>fix it</think>\n<tool_calls>\n{json.dumps(list(calls))}\n</tool_calls>"


def call(name: str, **arguments) -> dict:
    return {"id": "tool_1", "name": name, "arguments": arguments}


def test_create_scene_reads_the_fenced_room():
    text = f"<create_scene>\n```json\n{json.dumps({**ROOM, 'objects': []})}\n```\n</create_scene>"
    assert parse_create_scene(text)["room_id"] == "Bedroom-1"


@pytest.mark.parametrize("text,needle", [
    ("here is a room", "no <create_scene>"),
    ("<create_scene>{\"a\": 1}</create_scene>", "```json fenced block"),
    ("<create_scene>\n```json\n{bad json\n```\n</create_scene>", "JSON is invalid"),
    ("<create_scene>\n```json\n[1, 2]\n```\n</create_scene>", "must be an object"),
])
def test_bad_create_scene_replies_name_the_problem(text, needle):
    with pytest.raises(ReplyError, match=needle):
        parse_create_scene(text)


@pytest.mark.parametrize("room,needle", [
    ({**ROOM, "bounds_top": ROOM["bounds_top"][:3]}, "bounds_bottom has 4 points but bounds_top has 3"),
    ({**ROOM, "bounds_bottom": [[0, 0, 0], [1, 0, 0], [0, 0, 1], [1, 0, 1]]}, "not a simple polygon"),
    ({**ROOM, "bounds_bottom": [[float("nan"), 0, 0]] * 4}, "must be finite"),
    ({**ROOM, "bounds_top": [[x, 0.1, z] for x, _, z in ROOM["bounds_bottom"]]}, "ceiling"),
])
def test_bad_rooms_are_refused(room, needle):
    with pytest.raises(ReplyError, match=needle):
        SceneState.from_flat(room)


@pytest.mark.parametrize("text,needle", [
    ("<think>x</think> no calls", "no <tool_calls>"),
    ("<tool_calls>[]</tool_calls>", "(no <think>|non-empty)"),
    ("<think>x</think><tool_calls>[{\"name\": \"terminate\"</tool_calls>", "JSON is invalid"),
    ("<think>x<tool_calls>[]</tool_calls>", "opened 1 time"),
    ("<think>x</think><tool_calls>[]</tool_calls>", "non-empty JSON list"),
    ("<think>x</think><tool_calls>[1]</tool_calls><tool_calls>[2]</tool_calls>", "2 <tool_calls> blocks"),
    ("<think>x</think><tool_calls>" + json.dumps([call("terminate", reason="r")] * 65) + "</tool_calls>",
     "at most 64"),
])
def test_bad_turn_replies_name_the_problem(text, needle):
    with pytest.raises(ReplyError, match=needle):
        parse_turn(text)


def test_fenced_json_inside_tool_calls_is_accepted():
    parsed = parse_turn("<think>a</think><tool_calls>\n```json\n[{\"name\": \"terminate\"}]\n```\n</tool_calls>")
    assert parsed.think == "a" and parsed.calls == [{"name": "terminate"}]


def test_every_tool_sets_absolute_values():
    state = two_nightstands()
    calls = [
        call("add_object", object_description="Oak wardrobe", position=[1.5, 0, 1.6], rotation=[0, 1, 0, 0],
             size=[1.2, 2.1, 0.6]),
        call("move_object", jid="obj_1", new_position=[-1.25, 0, -1.7]),
        call("rotate_object", jid="obj_3", new_rotation=[0, 0.70711, 0, 0.70711]),
        call("scale_object", jid="obj_3", new_size=[1.8, 0.5, 2.1]),
        call("replace_object", jid_to_replace="obj_2", new_object_description="Oak nightstand"),
        call("remove_object", jid="obj_4"),
    ]
    result = apply_calls(state, calls)
    assert not result.errors
    objs = {o["id"]: o for o in result.state.objects}
    assert objs["obj_1"]["pos"] == [-1.25, 0, -1.7]
    assert objs["obj_3"]["rot"] == [0, 0.70711, 0, 0.70711] and objs["obj_3"]["size"] == [1.8, 0.5, 2.1]
    assert objs["obj_2"]["desc"] == "Oak nightstand" and "jid" not in objs["obj_2"]  # retrieved again
    assert objs["obj_2"]["pos"] == [1.2, 0, -1.7]  # replace keeps the pose
    assert "obj_4" not in objs  # the wardrobe was added as obj_4, then removed
    assert result.added == ["obj_4", "obj_2"] and result.removed == ["obj_4"]
    assert state.objects[0]["pos"] == [-1.2, 0, -1.7]  # the input state is never edited


def test_ids_are_never_reused():
    state = two_nightstands()
    add = call("add_object", object_description="Lamp", position=[0, 0, 1], rotation=[0, 0, 0, 1],
               size=[0.3, 1.5, 0.3])
    state = apply_calls(state, [call("remove_object", jid="obj_3"), add]).state
    assert [o["id"] for o in state.objects] == ["obj_1", "obj_2", "obj_4"]


def test_terminate_stops_and_later_calls_are_ignored():
    result = apply_calls(two_nightstands(), [call("terminate", reason="done"), call("remove_object", jid="obj_1")])
    assert result.terminated and result.reason == "done" and result.ignored == 1
    assert len(result.state.objects) == 3


MALFORMED = [
    ("unknown tool", call("teleport_object", jid="obj_1"), "unknown tool 'teleport_object'"),
    ("unknown id", call("move_object", jid="obj_9", new_position=[0, 0, 0]), "no object with id 'obj_9'"),
    ("nan size", call("scale_object", jid="obj_1", new_size=[float("nan"), 1, 1]), "must be finite"),
    ("huge size", call("scale_object", jid="obj_1", new_size=[1e6, 1, 1]), "out of range"),
    ("zero size", call("scale_object", jid="obj_1", new_size=[0, 1, 1]), "must be >="),
    ("far position", call("move_object", jid="obj_1", new_position=[0, 0, 1e9]), "out of range"),
    ("short vector", call("move_object", jid="obj_1", new_position=[0, 0]), "list of 3 numbers"),
    ("text in vector", call("move_object", jid="obj_1", new_position=[0, "a", 0]), "must be a number"),
    ("zero quaternion", call("rotate_object", jid="obj_1", new_rotation=[0, 0, 0, 0]), "zero quaternion"),
    ("missing argument", call("add_object", object_description="x", position=[0, 0, 0]), "missing argument"),
    ("no target", call("move_object", new_position=[0, 0, 0]), "missing the object to edit"),
    ("empty description", call("replace_object", jid_to_replace="obj_1", new_object_description=" "),
     "non-empty string"),
    ("not an object", ["move_object"], "must be an object"),
    ("arguments not json", {"name": "move_object", "arguments": "{jid: obj_1"}, "not valid JSON"),
    ("no name", {"arguments": {}}, "no tool name"),
]


@pytest.mark.parametrize("label,bad,needle", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_call_leaves_the_scene_unchanged(label, bad, needle):
    state = two_nightstands()
    before = copy.deepcopy(state.to_flat())
    good = call("move_object", jid="obj_3", new_position=[0, 0, 0])
    result = apply_calls(state, [good, bad])
    assert result.errors and needle in " ".join(result.errors)
    assert result.state.to_flat() == before and not result.applied  # atomic: the good call is undone too
    assert state.to_flat() == before


def test_a_shared_jid_is_refused_by_default_and_names_the_candidates():
    result = apply_calls(two_nightstands(), [call("move_object", jid="ns-model", new_position=[0, 0, 1.5])])
    assert result.errors == ["call 1 (move_object): jid 'ns-model' is shared by obj_1, obj_2; "
                             "name one object by its id"]


def test_a_unique_jid_or_an_id_edits_one_instance():
    state = two_nightstands()
    moved = apply_calls(state, [call("move_object", jid="obj_2", new_position=[1.0, 0, -1.7])]).state
    assert [o["pos"] for o in moved.objects[:2]] == [[-1.2, 0, -1.7], [1.0, 0, -1.7]]
    by_jid = apply_calls(state, [call("move_object", jid="bed-1", new_position=[0, 0, -0.8])]).state
    assert by_jid.objects[2]["pos"] == [0, 0, -0.8]


def test_jid_addressing_is_the_released_behaviour():
    state = two_nightstands()
    result = apply_calls(state, [call("move_object", jid="ns-model", new_position=[0, 0, 1.5])], Addressing.JID)
    # As utils/scene_editor.py: an edit hits the first object carrying the jid, a removal every one.
    assert not result.errors and [o["pos"] for o in result.state.objects[:2]] == [[0, 0, 1.5], [1.2, 0.0, -1.7]]
    removed = apply_calls(state, [call("remove_object", jid="ns-model")], Addressing.JID)
    assert not removed.errors and len(removed.state.objects) == len(state.objects) - 2
    assert "id" not in result.state.to_flat(Addressing.JID)["objects"][0]
    refused = apply_calls(state, [call("move_object", jid="obj_1", new_position=[0, 0, 0])], Addressing.JID)
    assert refused.errors == ["call 1 (move_object): no object has jid/uid 'obj_1'"]


def test_from_flat_keeps_unique_ids_and_renames_duplicates():
    state = SceneState.from_flat({**ROOM, "objects": [{**NIGHTSTAND, "pos": [0, 0, 0], "id": "obj_7"},
                                                      {**NIGHTSTAND, "pos": [1, 0, 0], "id": "obj_7"}]})
    ids = [o["id"] for o in state.objects]
    assert ids[0] == "obj_7" and ids[1] != "obj_7" and len(set(ids)) == 2
    assert state.new_id() not in ids
