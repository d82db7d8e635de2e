"""JSON that json.loads could not refuse cleanly (a 10,000-digit integer: a bare ValueError;
100,000 brackets: RecursionError), in LEGO-Eval's files and in an agent's or a model's reply:
files are one ``error:`` line with exit 2, replies are invalid actions or rejected answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness import Action
from buildbench.llm import ScriptedChat
from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.io import write_thor
from buildbench.suites.legoeval.constraints import ProgramError
from buildbench.suites.legoeval.constraints.translate import translate
from buildbench.suites.legoeval.env import LegoEvalEnv
from buildbench.suites.legoeval.options import LegoEvalOptions
from buildbench.suites.legoeval.pipeline.arguments import parse_arguments
from buildbench.suites.legoeval.pipeline.plan import parse_plan
from buildbench.suites.legoeval.tasks import make_task
from buildbench.suites.legoeval.tools import MENUS
from buildbench.suites.legoeval.tools.multimodal import parse_list

BIG_INT = '{"a": ' + "9" * 10_000 + "}"
DEEP = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
HOSTILE = [(BIG_INT, "an integer of 10000 digits is over the 4300-digit limit"),
           (DEEP, "nested deeper than 200 levels")]


@pytest.fixture(scope="module")
def house_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = HouseBuilder()
    b.room("bedroom", (0, 0, 4, 4), room_type="bedroom")
    b.place("bed", "bedroom", center_xz=(2, 2))
    path = tmp_path_factory.mktemp("house") / "house.json"
    path.write_text(json.dumps(write_thor(b.build())))
    return path


def _one_error(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(["legoeval", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("content, message", HOSTILE)
def test_hostile_files_are_one_error_line(content: str, message: str, house_file: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    err = _one_error(capsys, ["evaluate", "--scene", str(bad), "--constraints", str(bad)])
    assert f"--scene {bad}: not JSON ({message}" in err
    err = _one_error(capsys, ["evaluate", "--scene", str(house_file), "--constraints", str(bad)])
    assert f"--constraints {bad}: not JSON ({message}" in err
    err = _one_error(capsys, ["tool", "get_room_list", "--scene", str(bad)])
    assert f"--scene {bad}: not JSON ({message}" in err
    err = _one_error(capsys, ["tool", "get_room_list", "--scene", str(house_file), "--args", content])
    assert f"--args: not JSON ({message}" in err


@pytest.mark.parametrize("content, message", HOSTILE)
def test_a_hostile_reply_is_an_invalid_action_and_the_episode_goes_on(content: str, message: str,
                                                                      house_file: Path) -> None:
    task = make_task("t0", instruction="A bedroom.", scene=json.loads(house_file.read_text()), constraints=[],
                     labels=[], pair="p0", aligned=True)
    env = LegoEvalEnv(task, LegoEvalOptions(render=False))
    env.reset(task)
    result = env.step(Action(text=content))
    assert not result.terminated and message in result.observation.text
    assert env.outcome().invalid_actions == 1
    after = env.step(Action(data={"tool": "get_room_list", "args": []}))
    assert "bedroom" in after.observation.text


@pytest.mark.parametrize("content, message", HOSTILE)
def test_a_hostile_model_reply_is_a_rejected_answer(content: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"the tool sequence is refused: {message}"):
        parse_plan("Tool Sequence: [" + content + "]", MENUS["OP"])
    model = ScriptedChat(["```json\n" + content + "\n```"] * 2)
    with pytest.raises(ProgramError, match=message):
        asyncio.run(translate(model, "The vibe is nice.", where="c4", retries=1))


@pytest.mark.parametrize("literal", ["[" + "1+" * 100_000 + "1]", "[" + "-" * 100_000 + "1]"])
def test_a_model_literal_too_deep_for_python_is_a_rejected_answer(literal: str) -> None:
    # ast.literal_eval raised RecursionError / MemoryError out of these parsers
    with pytest.raises(ValueError, match="the tool sequence is not a list of edges: nested too deeply"):
        parse_plan("Tool Sequence: " + literal, MENUS["OP"])
    with pytest.raises(ValueError, match="the arguments are not a list literal: nested too deeply"):
        parse_arguments("Arguments: " + literal, 1)
    assert parse_list("Objects: ['bed', 'sofa']") == ["bed", "sofa"]
    assert isinstance(parse_list(literal), list)  # falls back to splitting, as for any non-literal
