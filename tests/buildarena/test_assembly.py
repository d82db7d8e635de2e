"""Assembly commands: sub-structures with compound ids, refused overlaps, rigid moves, history replay."""

from __future__ import annotations

import json

import numpy as np

from buildbench.suites.buildarena.library import Workbench, rebuild
from buildbench.suites.buildarena.model import Machine, Rules


def beam() -> Machine:
    bench = Workbench()
    bench.call("start", {"note": "beam"})
    bench.call("attach_block_to", {"base_block": 1, "face": "E", "new_block": "Small Wooden Block"})
    return bench.machine


def assembly() -> Workbench:
    return Workbench(machine=Machine(is_assembly=True), saved={"beam": beam()})


def test_add_two_substructures_and_connect() -> None:
    bench = assembly()
    first = bench.call("add_machine", {"machine_id": "beam"})
    assert first.text.startswith(
        "You have successfully added sub-structure A using machine beam\nExisting Blocks: 2"
    )
    before = json.dumps(bench.machine.to_json())
    clash = bench.call("add_machine", {"machine_id": "beam"})
    assert not clash.ok
    assert "Overlapping detected between <ID B_1: Starting Block> and <ID A_1: Starting Block>" in clash.text
    assert json.dumps(bench.machine.to_json()) == before
    assert bench.call("add_machine", {"machine_id": "beam", "init_shift": [3, 0, 0]}).ok
    brace = bench.call(
        "connect_blocks",
        {"block_a": "A_2", "face_a": "A", "block_b": "B_2", "face_b": "B", "connector": "Brace"},
    )
    assert brace.ok and "<ID 1: Brace>" in brace.text
    assert bench.call(
        "attach_block_to", {"base_block": "A_2", "face": "C", "new_block": "Small Wooden Block"}
    ).text.startswith("You have successfully added <ID 2: Small Wooden Block>.")
    assert (
        bench.call("add_machine", {"machine_id": "nope"}).text
        == "Machine nope not found, available machines: beam, please try again."
    )
    assert bench.call("start").ok is False


def test_shift_rotate_remove_substructure() -> None:
    bench = assembly()
    bench.call("add_machine", {"machine_id": "beam"})
    bench.call("add_machine", {"machine_id": "beam", "init_shift": [3, 0, 0]})
    before = json.dumps(bench.machine.to_json())
    assert not bench.call("shift_machine", {"machine_index": "B", "position": [-2.5, 0, 0]}).ok
    assert json.dumps(bench.machine.to_json()) == before  # the released code moved it anyway
    assert bench.call("shift_machine", {"machine_index": "B", "position": [1, 0, 0]}).ok
    assert np.allclose(bench.machine.blocks["B_1"].position, [4, 0, 0])
    assert bench.call("rotate_machine", {"machine_index": "B", "rotation": [90, 0, 0]}).ok
    # Positive yaw turns clockwise seen from above: the beam that pointed north now points east.
    assert np.allclose(bench.machine.blocks["B_2"].position, [4.5, 0, 0])
    assert (
        bench.call("rotate_machine", {"machine_index": "Z", "rotation": [0, 0, 0]}).text
        == "Sub-structure Z not found, please try again."
    )
    assert bench.call("remove_machine", {"machine_index": "B"}).ok
    assert sorted(bench.machine.blocks) == ["A_1", "A_2"]


def test_assembly_history_replays() -> None:
    bench = assembly()
    bench.call("add_machine", {"machine_id": "beam"})
    bench.call("add_machine", {"machine_id": "beam", "init_shift": [3, 0, 0], "init_rotation": [90, 0, 0]})
    bench.call(
        "connect_blocks",
        {"block_a": "A_2", "face_a": "A", "block_b": "B_2", "face_b": "E", "connector": "Winch"},
    )
    again = rebuild(bench.machine.history, Rules(), saved=bench.saved)
    assert json.dumps(again.to_json()) == json.dumps(bench.machine.to_json())


def test_assembly_commands_need_an_assembly() -> None:
    bench = Workbench()
    bench.call("start")
    assert bench.call("shift_machine", {"machine_index": "A", "position": [1, 0, 0]}).text.startswith(
        "Assembly commands are only available"
    )
