"""The ``released`` library profile: its quirks one by one, the env option and the replay command."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from buildbench.harness import get_suite
from buildbench.suites.buildarena.cli import cli
from buildbench.suites.buildarena.env import BuildArenaEnv, rebuild_outcome
from buildbench.suites.buildarena.library.released import ReleasedWorkbench
from buildbench.suites.buildarena.suite import to_task

DATA = Path(__file__).resolve().parent / "data"


def _bench() -> ReleasedWorkbench:
    bench = ReleasedWorkbench()
    bench.call("start", {})
    return bench


def test_ballast_is_waivable_and_the_starting_block_guard_checks_id_zero() -> None:
    bench = _bench()
    out = bench.call("attach_block_to", {"base_block": 1, "face": "E", "new_block": "Ballast"})
    assert out.ok and out.text.startswith("You have successfully added <ID 2: Ballast>.")
    assert bench.call("remove_block", {"block_id": 0}).text == "The Starting Block can not be removed"
    crash = bench.call("remove_block", {"block_id": "1"})
    assert crash.crashed and crash.text == "AttributeError: 'NoneType' object has no attribute 'sticky'"
    assert list(bench.machine.blocks) == ["2"]  # deleted before the crash, as in the original


def test_removing_a_connector_deletes_it_then_crashes() -> None:
    bench = _bench()
    bench.call("attach_block_to", {"base_block": 1, "face": "E", "new_block": "Small Wooden Block"})
    bench.call("connect_blocks", {"block_a": 2, "face_a": "A", "block_b": 1, "face_b": "A", "connector": "Brace"})
    out = bench.call("remove_block", {"block_id": 3})
    assert out.text == "ValueError: 3 not in collision manager!" and "3" not in bench.machine.blocks


def test_check_order_and_unknown_connector_crash() -> None:
    bench = _bench()
    out = bench.call("connect_blocks", {"block_a": 1, "face_a": "E", "block_b": 1, "face_b": "F",
                                         "connector": "Rope"})
    assert out.text == "TypeError: 'NoneType' object is not subscriptable"
    out = bench.call("attach_block_to", {"base_block": 7, "face": "top", "new_block": "Torch"})
    assert out.text == "Base block 7 not found, please try again."


def test_keys_are_shared_by_every_block_of_a_type() -> None:
    bench = _bench()
    bench.call("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Powered Wheel"})
    bench.call("attach_block_to", {"base_block": 1, "face": "B", "new_block": "Powered Wheel"})
    bench.call("change_control_key", {"block_id": 2, "action": "spinning_forward", "new_key": "UpArrow"})
    config = bench.call("review_control_config", {}).text
    assert config == ("Key: UpArrow, Actions: spinning_forward of block 2 'Powered Wheel', "
                      "spinning_forward of block 3 'Powered Wheel'")


def test_position_comes_from_the_base_face_and_numpy_prints_arrays() -> None:
    bench = _bench()
    bench.call("attach_block_to", {"base_block": 1, "face": "E", "new_block": "Small Wooden Block"})
    out = bench.call("shift_block", {"block_id": 2, "shift_real": [0.25, 0, 0.5]})
    assert "is shifted by [0.25, 0, 0.5]" in out.text and "Position: [0.,1.,0.]" in out.text
    assert "Face label: E, Face center: [0.25, 1.5 , 0.5 ]" in out.text


def test_env_option_selects_the_released_library() -> None:
    env = get_suite("buildarena").make_env(to_task("lift-1"), get_suite("buildarena").parse_options({"profile": "released"}))
    assert isinstance(env, BuildArenaEnv) and env.options.profile == "released"
    env.reset(to_task("lift-1"))
    out = env.bench.call("start", {})
    env.bench.call("attach_block_to", {"base_block": 1, "face": "E", "new_block": "Ballast"})
    assert out.ok and env.machine().num_blocks == 2
    env.set_final("1")
    outcome = env.outcome()
    assert outcome.profile == "released"
    rebuilt = rebuild_outcome(outcome)
    assert rebuilt is not None and [b.type for b in rebuilt.blocks.values()] == ["Starting Block", "Ballast"]


def test_replay_command_reports_agreement_with_a_recording(tmp_path: Path) -> None:
    line = (DATA / "differential-heldout.jsonl.gz")
    result = CliRunner().invoke(cli, ["replay", str(line), "--profile", "released"])
    assert result.exit_code == 0, result.output
    first = json.loads(result.stdout.splitlines()[0])
    assert first["agreement"]["calls"] == first["agreement"]["normalized"] > 0
    assert "agreement (released):" in result.stderr
