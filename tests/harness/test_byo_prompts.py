"""``-o prompts=DIR``: a user's prompt files replace a suite's own, by file name (issue 14)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from buildbench.harness import ConfigError, RunConfig, Runner, Store, get_suite, suite_names
from buildbench.harness.prompts import PROMPTS_OPTION, PromptFiles, prompt_folder

REPO = Path(__file__).resolve().parents[2]
SPY = """
import json, os
def chat(messages, tools=None, **options):
    with open(os.environ["BYO_SPY"], "a") as f:
        f.write(json.dumps(messages) + "\\n")
    return '{"blocks": [{"center": [0, 0, 0.5], "size": [0.5, 0.5, 1.0]}]}'
"""


@pytest.mark.parametrize("name", ["example", "dreamhouse", "buildarena", "bimedit", "legoeval", "scenerevis"])
def test_every_suite_declares_replaceable_prompt_files(name: str) -> None:
    suite = get_suite(name)
    assert name in suite_names()
    assert suite.prompts is not None and suite.prompts.names()
    assert PROMPTS_OPTION in suite.option_specs()
    assert suite.validate_task is not None
    for own in suite.prompts.names():  # every own file reads as text
        assert suite.prompts.read(own).strip()


def test_override_falls_back_and_is_scoped(tmp_path: Path) -> None:
    own = PromptFiles(tmp_path / "own")
    own.folder.mkdir()
    (own.folder / "a.md").write_text("ours A")
    (own.folder / "b.md").write_text("ours B")
    (own.folder / "__init__.py").write_text("")
    user = tmp_path / "user"
    user.mkdir()
    (user / "a.md").write_text("theirs A")
    assert own.names() == ["a.md", "b.md"]
    with prompt_folder(user):
        assert (own.read("a.md"), own.read("b.md")) == ("theirs A", "ours B")
    assert own.read("a.md") == "ours A"
    with pytest.raises(KeyError, match="no prompt file 'c.md'"):
        own.read("c.md")


def test_check_folder_refuses_unknown_names(tmp_path: Path) -> None:
    own = PromptFiles(tmp_path / "own")
    own.folder.mkdir()
    (own.folder / "system.md").write_text("x")
    user = tmp_path / "user"
    user.mkdir()
    (user / ".DS_Store").write_text("")
    assert own.check_folder(user) == user.resolve()
    (user / "sytem.md").write_text("typo")
    with pytest.raises(ConfigError, match=r"'sytem.md' is not a prompt file of this suite; files: system.md"):
        own.check_folder(user)
    with pytest.raises(ConfigError, match="not a folder"):
        own.check_folder(tmp_path / "nope")


def test_run_uses_the_users_prompt_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy_log = tmp_path / "seen.jsonl"
    monkeypatch.setenv("BYO_SPY", str(spy_log))
    (tmp_path / "spy.py").write_text(textwrap.dedent(SPY))
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "task.md").write_text("Build {target_height_m} m high; {{json}} please.")
    config = RunConfig(suite="example", agent="llm", protocol="one-shot", model=f"python:{tmp_path}/spy.py:chat",
                       split="demo", limit=1, workers=0, options={"prompts": str(prompts)})
    Runner(config, tmp_path / "run").run()
    messages = json.loads(spy_log.read_text().splitlines()[0])
    task = get_suite("example").load_tasks("demo", 0)[0]
    assert messages[0]["content"] == get_suite("example").prompts.read("system.md").strip()  # fell back
    assert messages[1]["content"] == f"Build {task.inputs['target_height_m']} m high; {{json}} please."
    with Store(tmp_path / "run", create=False) as store:  # stored resolved, so a resume finds the same folder
        assert store.manifest()["config"]["options"]["prompts"] == str(prompts.resolve())


def test_run_refuses_a_folder_with_unknown_files(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "system_prompt.md").write_text("x")
    config = RunConfig(suite="example", agent="reference", protocol="one-shot", split="demo", limit=1,
                       options={"prompts": str(prompts)})
    with pytest.raises(ConfigError, match="'system_prompt.md' is not a prompt file of this suite"):
        Runner(config, tmp_path / "run").run()
