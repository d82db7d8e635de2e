"""Agent code that swaps its model for a link, FIFO or device cannot make the harness read,
copy or hang on it; the last good commit stays."""

from __future__ import annotations

import json
import time

import pytest

from buildbench.harness import Action, Task
from buildbench.llm import ToolCall
from buildbench.suites.bimedit.env import BimEditEnv
from buildbench.suites.bimedit.options import BimEditOptions

from .test_env_tool import door_task  # noqa: F401 (fixture)

ATTACKS = {
    "link to a host file": "import os\nos.remove(MODEL_PATH)\nos.symlink('/etc/shadow', MODEL_PATH)",
    "link to /dev/zero": "import os\nos.remove(MODEL_PATH)\nos.symlink('/dev/zero', MODEL_PATH)",
    "fifo": "import os\nos.remove(MODEL_PATH)\nos.mkfifo(MODEL_PATH)",
}


def _call(code: str, i: int) -> Action:
    return Action(tool_calls=[ToolCall(id=f"c{i}", name="execute_ifc_code", arguments={"code": code})])


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_swapped_model_is_never_read(door_task: Task, tmp_path, attack: str) -> None:  # noqa: F811
    env = BimEditEnv(BimEditOptions(call_timeout_s=30), output_dir=tmp_path / "out")
    try:
        env.reset(door_task)
        first = env.step(_call("ifc.by_type('IfcDoor')[0].Name = 'moved'\ncommit()", 0))
        assert json.loads(first.observation.tool_results[0][1]).get("committed") is True
        t0 = time.monotonic()
        step = env.step(_call(ATTACKS[attack], 1))
        assert time.monotonic() - t0 < 30
        reply = json.loads(step.observation.tool_results[0][1])
        assert "model_unreadable" in reply and "committed" not in reply
        # The working copy is back: a worker that restarts opens the last commit, and the
        # agent can go on committing.
        crash = env.step(_call("import os\nos._exit(3)", 2))
        assert json.loads(crash.observation.tool_results[0][1])["status"] == "crash"
        again = env.step(_call("assert ifc.by_type('IfcDoor')[0].Name == 'moved'\n"
                               "ifc.by_type('IfcDoor')[0].Name = 'again'\ncommit()", 3))
        assert json.loads(again.observation.tool_results[0][1]).get("committed") is True
        out = env.outcome()
        kept = (tmp_path / "out" / "committed.ifc").read_bytes()
        assert out.committed and kept.startswith(b"ISO-10303-21") and b"again" in kept
        assert b"root:" not in kept
    finally:
        env.close()
