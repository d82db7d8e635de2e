"""Spec 2.9 golden vectors, every error message, bad input and persistence of the construction library."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from buildbench.suites.buildarena.export import history_json, load_history, to_bsg
from buildbench.suites.buildarena.library import Workbench, replay, replay_line
from buildbench.suites.buildarena.model import Machine, Rules, load_catalogue

WOOD = "Small Wooden Block"


def started() -> Workbench:
    bench = Workbench()
    assert bench.call("start").ok
    return bench


def attach(bench: Workbench, base: object, face: str, kind: str = WOOD) -> str:
    out = bench.call("attach_block_to", {"base_block": base, "face": face, "new_block": kind})
    assert out.ok, out.text
    return out.text


def line(text: str, prefix: str) -> str:
    return next(x for x in text.split("\n") if x.strip().startswith(prefix)).strip()


def faces(text: str) -> dict[str, str]:
    out = {}
    for x in text.split("\n"):
        if x.startswith("Face label: "):
            label = x[len("Face label: ")]
            out[label] = x.split("Facing towards ")[1]
    return out


# ---- spec 2.9 golden vectors -------------------------------------------------


def test_starting_block_faces() -> None:
    text = Workbench().call("start").text
    f = faces(text)
    assert f == {
        "A": "<East with 0.0° pitch>",
        "B": "<West with 0.0° pitch>",
        "C": "<straight up>",
        "D": "<straight down>",
        "E": "<North with 0.0° pitch>",
        "F": "<South with 0.0° pitch>",
    }
    assert "Face label: A, Face center: [0.5, 0. , 0. ]" in text


def test_wooden_block_face_labelling() -> None:
    bench = started()
    t = attach(bench, 1, "E")
    assert line(t, "Position") == "Position: [0.,1.,0.]"
    assert faces(t) == {
        "A": "<East with 0.0° pitch>",
        "B": "<West with 0.0° pitch>",
        "C": "<straight up>",
        "D": "<straight down>",
        "E": "<North with 0.0° pitch>",
    }
    assert "Face label: E, Face center: [0. , 1.5, 0. ]" in t
    t = attach(bench, 2, "A")
    assert line(t, "Position") == "Position: [1.,1.,0.]"
    assert faces(t) == {
        "A": "<South with 0.0° pitch>",
        "B": "<North with 0.0° pitch>",
        "C": "<straight up>",
        "D": "<straight down>",
        "E": "<East with 0.0° pitch>",
    }
    t = attach(bench, 1, "F")
    assert line(t, "Position") == "Position: [ 0.,-1., 0.]"
    assert (
        faces(t)["C"] == "<straight down>"
        and faces(t)["D"] == "<straight up>"
        and faces(t)["E"] == "<South with 0.0° pitch>"
    )
    t = attach(bench, 1, "C")
    assert line(t, "Position") == "Position: [0.,0.,1.]"
    assert faces(t) == {
        "A": "<East with 0.0° pitch>",
        "B": "<West with 0.0° pitch>",
        "C": "<South with 0.0° pitch>",
        "D": "<North with 0.0° pitch>",
        "E": "<straight up>",
    }
    t = attach(bench, 2, "C")
    assert line(t, "Position") == "Position: [0.,1.,1.]"
    assert faces(t)["C"] == "<South with 0.0° pitch>" and faces(t)["E"] == "<straight up>"


@pytest.mark.parametrize(
    ("face", "expected"),
    [
        ("A", "Rolling towards <North with 0.0° pitch> with 0° camber"),
        ("B", "Rolling towards <South with 0.0° pitch> with 0° camber"),
        ("E", "Rolling towards <West with 0.0° pitch> with 0° camber"),
        ("F", "Rolling towards <East with 0.0° pitch> with 0° camber"),
        ("C", "Almost horizontal spinning counterclockwise around with the axis pointing at <straight up>"),
        ("D", "Almost horizontal spinning clockwise around with the axis pointing at <straight down>"),
    ],
)
def test_wheel_spin_captions(face: str, expected: str) -> None:
    bench = started()
    t = attach(bench, 1, face, "Powered Wheel")
    assert expected in t.split("\n")


def test_wheel_position_and_flip() -> None:
    bench = started()
    assert line(attach(bench, 1, "A", "Powered Wheel"), "Position") == "Position: [0.5,0. ,0. ]"
    bench = started()
    attach(bench, 1, "F", "Powered Wheel")
    out = bench.call("flip_spin", {"block_id": 2})
    assert out.ok and "Rolling towards <West with 0.0° pitch> with 0° camber" in out.text


def test_wheel_overlaps_neighbour() -> None:
    bench = started()
    attach(bench, 1, "E")
    attach(bench, 2, "A")
    out = bench.call("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Powered Wheel"})
    assert not out.ok
    assert "Overlapping detected between <ID 4: Powered Wheel> and <ID 3: Small Wooden Block>" in out.text


@pytest.mark.parametrize(
    ("face", "pointing", "centre"),
    [
        ("A", "<straight down>", [1, 0, 0]),
        ("B", "<straight down>", [-1, 0, 0]),
        ("E", "<straight down>", [0, 1, 0]),
        ("C", "<North with 0.0° pitch>", [0, 0, 1]),
        ("D", "<South with 0.0° pitch>", [0, 0, -1]),
        ("F", "<straight up>", [0, -1, 0]),
    ],
)
def test_water_cannon_directions(face: str, pointing: str, centre: list[int]) -> None:
    t = attach(started(), 1, face, "Water Cannon")
    assert f"Pointing at {pointing}" in t
    if pointing == "<straight down>":
        c = np.array(centre, dtype=float)
        inlet, outlet = c + [0, 0, 0.75], c - [0, 0, 1]
        assert (
            f"Inlet is at [{inlet[0]:.2f}, {inlet[1]:.2f}, {inlet[2]:.2f}], outlet is at [{outlet[0]:.2f}, {outlet[1]:.2f}, {outlet[2]:.2f}]"
            in t
        )


def test_cannon_twists() -> None:
    bench = started()
    attach(bench, 1, "A", "Water Cannon")
    assert (
        "Pointing at <South with 0.0° pitch>" in bench.call("twist_block", {"block_id": 2, "angle": 90}).text
    )
    assert "Pointing at <straight up>" in bench.call("twist_block", {"block_id": 2, "angle": 90}).text


@pytest.mark.parametrize(
    ("face", "pointing"),
    [
        ("A", "<straight up>"),
        ("B", "<straight up>"),
        ("E", "<straight up>"),
        ("C", "<South with 0.0° pitch>"),
        ("D", "<North with 0.0° pitch>"),
        ("F", "<straight down>"),
    ],
)
def test_torch_directions(face: str, pointing: str) -> None:
    bench = started()
    t = attach(bench, 1, face, "Torch")
    assert f"Pointing at {pointing}" in t
    if face == "A":
        assert "Heating up a spherical area with radius 0.3 around [1.00, 0.00, 1.00]" in t
        assert "Pointing at <straight down>" in bench.call("twist_block", {"block_id": 2, "angle": 180}).text


def test_connect_and_too_close() -> None:
    bench = started()
    attach(bench, 1, "E")
    attach(bench, 2, "A")
    out = bench.call(
        "connect_blocks", {"block_a": 3, "face_a": "E", "block_b": 1, "face_b": "F", "connector": "Brace"}
    )
    assert (
        out.ok
        and "<ID 4: Brace>" in out.text
        and "Connecting <ID 3: Small Wooden Block> at [1.5 1.  0. ]" in out.text
    )
    same = bench.call(
        "connect_blocks", {"block_a": 1, "face_a": "F", "block_b": 1, "face_b": "F", "connector": "Winch"}
    )
    assert same.text == "The two faces are too close to each other, please try again."


# ---- every error message, machine unchanged ----------------------------------


ERRORS = [
    (
        "attach_block_to",
        {"base_block": 1, "face": "A", "new_block": "Brace"},
        "Connectors can not be attached to a single face. Use 'connect_blocks' to connect two faces instead.",
    ),
    (
        "attach_block_to",
        {"base_block": 1, "face": "A", "new_block": "Cannon"},
        "Block Cannon not available, please try again.",
    ),
    (
        "attach_block_to",
        {"base_block": 1, "face": "A", "new_block": "Ballast"},
        "Block Ballast not available, please try again.",
    ),
    (
        "attach_block_to",
        {"base_block": 1, "face": "A", "new_block": "Starting Block"},
        "Block Starting Block not available, please try again.",
    ),
    (
        "attach_block_to",
        {"base_block": 42, "face": "A", "new_block": WOOD},
        "Base block 42 not found, please try again.",
    ),
    (
        "attach_block_to",
        {"base_block": 1, "face": "G", "new_block": WOOD},
        "Base block 1 Starting Block does not have face G, please try again.",
    ),
    (
        "attach_block_to",
        {"base_block": 1, "face": "E", "new_block": WOOD},
        "Face E of base block 1 Starting Block is already occupied, please try again.",
    ),
    (
        "connect_blocks",
        {"block_a": 1, "face_a": "A", "block_b": 2, "face_b": "A", "connector": WOOD},
        "Basic blocks can not be used as connectors, please try again.",
    ),
    (
        "connect_blocks",
        {"block_a": 1, "face_a": "A", "block_b": 9, "face_b": "A", "connector": "Brace"},
        "Block 9 not found, please try again.",
    ),
    (
        "connect_blocks",
        {"block_a": 1, "face_a": "Q", "block_b": 2, "face_b": "A", "connector": "Brace"},
        "Block 1 Starting Block does not have face Q, please try again.",
    ),
    (
        "connect_blocks",
        {"block_a": 1, "face_a": "A", "block_b": 3, "face_b": "A", "connector": "Brace"},
        "Block 3 Water Cannon does not have any faces, please try again.",
    ),
    (
        "connect_blocks",
        {"block_a": 1, "face_a": "A", "block_b": 2, "face_b": "A", "connector": "Rope"},
        "Connector Rope not available, use one of: Brace, Winch, please try again.",
    ),
    ("remove_block", {"block_id": 1}, "The Starting Block can not be removed"),
    ("remove_block", {"block_id": 7}, "Specified block 7 not found, please try again."),
    ("twist_block", {"block_id": 7, "angle": 90}, "Specified block 7 not found, please try again."),
    (
        "twist_block",
        {"block_id": 1, "angle": 90},
        "The block 1 <Starting Block> is not attached to any face and can not be twisted, please try again.",
    ),
    (
        "twist_block",
        {"block_id": 2, "angle": float("nan")},
        "The twist angle must be a finite number of degrees, got nan, please try again.",
    ),
    (
        "shift_block",
        {"block_id": 7, "shift_real": [0, 0, 0.1]},
        "Specified block 7 not found, please try again.",
    ),
    (
        "shift_block",
        {"block_id": 2, "shift_real": [0, 0, 0.6]},
        "Each component of shift_real must be within [-0.5, 0.5], got [0, 0, 0.6]; too much offset would detach the block, please try again.",
    ),
    (
        "shift_block",
        {"block_id": 2, "shift_real": [0, float("nan"), 0]},
        "shift_real must be a list of three finite numbers [dx, dy, dz], got [0, nan, 0], please try again.",
    ),
    (
        "shift_block",
        {"block_id": 2, "shift_real": [0, 0]},
        "shift_real must be a list of three finite numbers [dx, dy, dz], got [0, 0], please try again.",
    ),
    ("flip_spin", {"block_id": 2}, "The block 2 <Small Wooden Block> does not spin, please try again."),
    ("flip_spin", {"block_id": 7}, "Specified block 7 not found, please try again."),
    ("get_block_details", {"block_id": 7}, "Block 7 not found"),
    (
        "change_control_key",
        {"block_id": 3, "action": "hold_to_fire", "new_key": "Space"},
        "Key 'Space' is not a valid control key, valid keys are UpArrow, DownArrow, LeftArrow, RightArrow, Alpha0-Alpha9 and Keypad0-Keypad9, please try again.",
    ),
    (
        "change_control_key",
        {"block_id": 2, "action": "hold_to_fire", "new_key": "Alpha1"},
        "The block 2 <Small Wooden Block> has no controllable locomotion, please try again.",
    ),
    (
        "change_control_key",
        {"block_id": 3, "action": "spin", "new_key": "Alpha1"},
        "Action 'spin' is not available for block 3 'Water Cannon', available actions: hold_to_fire, please try again.",
    ),
    (
        "add_control_sequence",
        {"time": 0, "key": "UpArrow", "hold_for": 3},
        "Key 'UpArrow' is not in the control key list, please try again.",
    ),
    (
        "add_control_sequence",
        {"time": -1, "key": "UpArrow", "hold_for": 3},
        "time must be a finite number of seconds >= 0, got -1, please try again.",
    ),
    ("remove_control_sequence", {"index": 0}, "Index '0' is out of range, please try again."),
    ("start", {}, None),
    (
        "add_machine",
        {"machine_id": "m"},
        "Assembly commands are only available while assembling sub-structures, please try again.",
    ),
    ("nonsense", {}, None),
    (
        "attach_block_to",
        {"base_block": 1, "face": "A"},
        "Missing parameter(s) 'new_block' for attach_block_to; it takes: base_block, face, new_block, note, please try again.",
    ),
    (
        "attach_block_to",
        {"base_block": 1, "face": "A", "new_block": WOOD, "colour": "red"},
        "Unexpected parameter(s) 'colour' for attach_block_to; it takes: base_block, face, new_block, note, please try again.",
    ),
    (
        "attach_block_to",
        {"base_block": [1], "face": "A", "new_block": WOOD},
        "Parameter 'base_block' of attach_block_to must be a block id (string or integer), got [1], please try again.",
    ),
    (
        "attach_block_to",
        "not a dict",
        "Parameters of attach_block_to must be a JSON object, got 'not a dict', please try again.",
    ),
]


def _small_machine() -> Workbench:
    bench = started()
    attach(bench, 1, "E")
    attach(bench, 1, "A", "Water Cannon")
    return bench


@pytest.mark.parametrize(
    ("op", "params", "message"), ERRORS, ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)]
)
def test_error_messages_leave_machine_unchanged(op: str, params: object, message: str | None) -> None:
    bench = _small_machine()
    before = json.dumps(bench.machine.to_json())
    out = bench.call(op, params)
    assert not out.ok
    if message is not None:
        assert out.text == message
    else:
        assert out.text.split("\n")[0] in ("Machine already exists",) or out.text.startswith(
            "Unknown operation 'nonsense'"
        )
    assert json.dumps(bench.machine.to_json()) == before


def test_not_started_and_overlap_messages_change_nothing() -> None:
    bench = Workbench()
    assert (
        bench.call("attach_block_to", {"base_block": 1, "face": "E", "new_block": WOOD}).text
        == "The machine has not been started, please start the machine first."
    )
    bench = _small_machine()
    before = json.dumps(bench.machine.to_json())
    out = bench.call("shift_block", {"block_id": 2, "shift_real": [0, -0.5, 0]})
    assert out.text.startswith(
        "Operation failed! The block 2 <Small Wooden Block> overlaps with existing blocks"
    )
    assert json.dumps(bench.machine.to_json()) == before


def test_huge_shift_refused_even_without_range_rule() -> None:
    bench = Workbench(rules=Rules.released())
    bench.call("start")
    attach(bench, 1, "E")
    out = bench.call("shift_block", {"block_id": 2, "shift_real": [1e300, 0, 0]})
    assert not out.ok and "beyond" in out.text


def test_ten_thousand_attach_calls_are_fast_and_capped() -> None:
    bench = Workbench(rules=Rules(max_blocks=400))
    bench.call("start")
    last = "1"
    for _ in range(10_000):
        out = bench.call("attach_block_to", {"base_block": last, "face": "E", "new_block": WOOD})
        if out.ok:
            last = str(bench.machine.next_id - 1)
    assert bench.machine.num_blocks == 400
    assert out.text == "The machine already has 400 blocks, the maximum is 400, please try again."
    assert bench.index.all_pairs() == []


# ---- controls, queries, persistence ------------------------------------------


def test_controls_are_per_block() -> None:
    bench = started()
    attach(bench, 1, "A", "Powered Wheel")
    attach(bench, 1, "B", "Powered Wheel")
    out = bench.call("change_control_key", {"block_id": 2, "action": "spinning_forward", "new_key": "Alpha2"})
    assert out.text.endswith("Action: spinning_forward, Key: Alpha2\nAction: spinning_backward, Key: ")
    assert (
        bench.call("review_control_config").text
        == "Key: Alpha2, Actions: spinning_forward of block 2 'Powered Wheel'"
    )
    assert (
        bench.call("add_control_sequence", {"time": 0, "key": "Alpha2", "hold_for": 5}).text
        == "Control sequence added: Press key 'Alpha2' at 0 seconds and hold for 5 seconds."
    )
    assert bench.call("review_control_sequence").text == (
        "Control Sequence:\nSequence 1:\nPress key 'Alpha2' at 0 seconds and hold for 5 seconds.\nAction: spinning_forward of block 2 'Powered Wheel'"
    )
    assert bench.call("review_powered_blocks").text.startswith(
        "The machine has the following powered blocks:\n<ID 2: Powered Wheel>"
    )
    assert bench.call("remove_control_sequence", {"index": 0}).ok
    assert bench.call("review_control_sequence").text == "No control sequence has been added."


def test_summary_reset_and_history_replay() -> None:
    bench = _small_machine()
    bench.call("twist_block", {"block_id": 3, "angle": 90})
    summary = bench.call("get_machine_summary").text
    assert summary.startswith(
        "Existing Blocks: 3\n\nMachine Summary: None\n(The starting block) <ID 1: Starting Block>"
    )
    assert [h.op for h in bench.machine.history] == [
        "start",
        "attach_block_to",
        "attach_block_to",
        "twist_block",
    ]
    rebuilt = load_history(history_json(bench.machine))
    assert json.dumps(rebuilt.to_json()) == json.dumps(bench.machine.to_json())
    assert json.dumps(
        Machine.from_json(json.loads(json.dumps(bench.machine.to_json()))).to_json()
    ) == json.dumps(bench.machine.to_json())
    assert bench.call("reset").text == "The machine has been reset, please start again."
    assert bench.machine.num_blocks == 0 and bench.machine.history == []


def test_shifted_block_displays_its_own_position() -> None:
    bench = started()
    attach(bench, 1, "E")
    out = bench.call("shift_block", {"block_id": 2, "shift_real": [0.25, 0, 0]})
    assert line(out.text, "Position") == "Position: [0.25,1.  ,0.  ]"


def test_replay_and_jsonl_line() -> None:
    calls = [
        {"op": "start", "params": {}},
        {"op": "attach_block_to", "params": {"base_block": 1, "face": "C", "new_block": WOOD}},
        "junk",
    ]
    result = replay(calls)
    assert [r.ok for r in result.results] == [True, True, False]
    assert [(b.id, b.type) for b in result.blocks] == [("1", "Starting Block"), ("2", WOOD)]
    assert np.allclose(result.blocks[1].position, [0, 0, 1])
    out = json.loads(replay_line(json.dumps(calls)))
    assert out["blocks"][1]["position"] == [0.0, 0.0, 1.0]
    assert json.loads(replay_line("[{"))["error"].startswith("invalid JSON")
    assert replay({"op": "start"}).error == "expected a JSON list of calls, got dict"


def test_bsg_export_is_valid_xml() -> None:
    bench = _small_machine()
    bench.call(
        "connect_blocks", {"block_a": 2, "face_a": "C", "block_b": 1, "face_b": "C", "connector": "Brace"}
    )
    root = ET.fromstring(to_bsg(bench.machine, name="car"))
    ids = [b.get("id") for b in root.iter("Block")]
    assert ids == ["0", "15", "56", "7"]
    assert to_bsg(bench.machine) == to_bsg(bench.machine)
    brace = list(root.iter("Block"))[3]
    end = [float(brace.find(f".//Vector3[@key='end-position']/{k}").text) for k in "XYZ"]
    assert math.isclose(np.linalg.norm(end), math.sqrt(1.0 + 0.0), abs_tol=1e-9)


def test_catalogue_physics_and_prompt_text() -> None:
    cat = load_catalogue()
    assert cat.buildable() == [WOOD, "Powered Wheel", "Water Cannon", "Torch"]
    assert cat.connectors() == ["Brace", "Winch"]
    assert cat.specs["Water Cannon"].mass == 1.5 and cat.specs["Starting Block"].mass == 0.25
    wheel = cat.specs["Powered Wheel"].collider
    assert wheel is not None and wheel.kind == "cylinder" and math.isclose(wheel.radius, 0.8)
    assert "Powered Wheel" in cat.describe() and "Ballast" not in cat.describe()
    assert cat.specs["Powered Wheel"].motor_rpm == 100.0
    assert (
        cat.specs["Water Cannon"].recoil_mass_units == 1.6 and cat.specs["Water Cannon"].steam_factor == 8.6
    )
    assert cat.specs["Torch"].heat_radius == 0.3 and cat.specs["Torch"].motor_rpm is None


def test_body_graph_for_physics() -> None:
    from buildbench.suites.buildarena.library.bodies import body_graph

    bench = started()
    attach(bench, 1, "E")
    attach(bench, 2, "A", "Powered Wheel")
    attach(bench, 1, "C", "Water Cannon")
    bench.call(
        "connect_blocks", {"block_a": 1, "face_a": "A", "block_b": 2, "face_b": "C", "connector": "Winch"}
    )
    graph = body_graph(bench.machine)
    bodies = {b.id: b for b in graph.bodies}
    assert sorted(bodies) == ["1", "2", "3", "4"]
    wheel = bodies["3"]
    assert wheel.mass == 1.0 and wheel.shape.kind == "cylinder" and wheel.shape.size == (1.0, 1.0, 0.5)
    assert np.allclose(wheel.shape.center, [0.75, 1, 0])  # half the thickness out from the face at x = 0.5
    assert np.allclose(np.abs(wheel.shape.rotation[:, 2]), [1, 0, 0])  # cylinder axis = attach normal (east)
    assert np.allclose(wheel.spin_axis, [1, 0, 0])
    assert np.isclose(np.linalg.det(wheel.shape.rotation), 1.0)
    cannon = bodies["4"]
    assert np.allclose(cannon.pointer, [0, 1, 0]) and cannon.shape.kind == "box"
    assert np.allclose(np.abs(cannon.shape.rotation) @ np.array(cannon.shape.size), [1, 1.75, 1])
    wood = bodies["2"]
    assert np.allclose(wood.shape.center, [0, 1, 0]) and wood.shape.size == (1.0, 1.0, 1.0)
    assert [(j.child, j.base, j.base_face) for j in graph.joints] == [
        ("2", "1", "E"),
        ("3", "2", "A"),
        ("4", "1", "C"),
    ]
    assert np.allclose(graph.joints[1].point, [0.5, 1, 0]) and np.allclose(graph.joints[1].normal, [1, 0, 0])
    (winch,) = graph.links
    assert (
        winch.mass == 0.4
        and np.allclose(winch.point_a, [0.5, 0, 0])
        and np.allclose(winch.point_b, [0, 1, 0.5])
    )
    assert math.isclose(bench.machine.mass, 0.25 + 0.3 + 1.0 + 1.5 + 0.4)


def test_tool_specs_cover_every_command() -> None:
    from buildbench.suites.buildarena.library.tools import tool_specs

    specs = {s["function"]["name"]: s["function"] for s in tool_specs()}
    assert len(specs) == 21
    assert "Small Wooden Block, Powered Wheel, Water Cannon, Torch" in specs["attach_block_to"]["description"]
    assert specs["connect_blocks"]["parameters"]["required"] == [
        "block_a",
        "face_a",
        "block_b",
        "face_b",
        "connector",
    ]
    assert [s["function"]["name"] for s in tool_specs("refine")] == [
        "twist_block",
        "shift_block",
        "flip_spin",
    ]


def test_load_history_rejects_bad_json() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        load_history("[{")
    with pytest.raises(ValueError, match="must be a JSON list"):
        load_history('{"op": "start"}')


def test_replay_reports_internal_errors_instead_of_raising(monkeypatch: pytest.MonkeyPatch) -> None:
    from buildbench.suites.buildarena.library import construction

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(construction, "face_center", broken)
    result = replay(
        [
            {"op": "start", "params": {}},
            {"op": "attach_block_to", "params": {"base_block": 1, "face": "A", "new_block": WOOD}},
        ]
    )
    assert result.error == "internal error in call 1 (attach_block_to): RuntimeError: boom"
    assert [r.ok for r in result.results] == [True]
