"""DreamHouse's executor process runs the agent's scripts, so the agent owns what it reports.

- A script that rewrites how its process reports (here: the sandbox runner's collect step)
  can send any JSON as the run's reply. A reply of the wrong shape (an error text that is an
  object, a string for the CPU time, an array for the members...) raised out of ``env.step`` in
  the harness (``'list' object has no attribute 'strip'``); now the run ends ``crash`` naming the
  field, the tampered process is replaced, and the episode goes on.
- A script that breaks the process for later scripts (patching the fake ``bpy``) made the env's
  own rebuild of the scene fail, which raised ``RuntimeError`` out of ``env.step``: an agent could
  turn its episode into a harness error. Now the rebuild retries once in a fresh process.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from buildbench.harness import Action

from .conftest import DreamHouseTarget

# Replaces the runner's collect step for one call: the next call reports normally again, so
# any lasting damage seen afterwards would be the harness's.
FORGE = """
import json as _j, buildbench.sandbox._session as _s
_orig = _s._Session._collect
def _once(self):
    _s._Session._collect = _orig
    return {{"status": "ok", "result_json": _j.dumps({reply})}}
_s._Session._collect = _once
"""


@pytest.fixture(scope="module")
def target() -> Iterator[DreamHouseTarget]:
    made = DreamHouseTarget()
    yield made
    made.close()


@pytest.mark.parametrize("reply,named", [
    ('{"status": "error", "members": [], "error": {"x": 1}, "traceback": [1]}', "field 'error' is an object"),
    ('{"status": "ok", "members": [], "cpu_s": "lots"}', "field 'cpu_s' is a string"),
    ('{"status": "ok", "members": "Stud"}', "field 'members' is a string"),
    ('{"status": "ok", "members": [], "extra": 1}', "an unknown field 'extra'"),
    ('{"status": "great", "members": []}', "status 'great'"),
    ('{"status": "ok"}', "no field 'members'"),
    ("[1, 2]", "an array, not an object"),
])
def test_a_forged_reply_of_the_wrong_shape_is_a_crash_naming_it(target: DreamHouseTarget, reply: str,
                                                                 named: str) -> None:
    out = target.run(FORGE.format(reply=reply))
    assert out.status == "crash" and "malformed reply" in out.error and named in out.error, out
    assert target.last.scene_lost and not target.last.members
    assert target.healthy()


def test_a_process_broken_for_later_scripts_does_not_break_the_rebuild(target: DreamHouseTarget) -> None:
    assert target.healthy()  # the scene holds members: a failed run makes the env rebuild them
    before = len(target.env.checkpoint())
    assert before > 0
    breaker = ("import buildbench.suites.dreamhouse.executors.fakebpy._api as api\n"
               "def broken(self, name):\n    raise ValueError('tampered')\n"
               "api.OpsModule.__getattr__ = broken\nraise ValueError('now rebuild')\n")
    step = target.env.step(Action(data={"code": breaker}))
    assert "now rebuild" in step.observation.text and len(target.env.checkpoint()) == before
    step = target.env.step(Action(data={"code": "print('after')"}))  # rebuilds first
    assert target.last.status == "ok" and "after" in target.last.stdout, target.last
    assert len(target.env.checkpoint()) == before
    assert target.healthy()


@pytest.mark.parametrize("code", [
    "raise ValueError('x' * 5_000_000)",
    "import sys\nsys.exit('y' * 5_000_000)",
    "class E(Exception):\n    def __str__(self):\n        return 'w' * 3_000_000\nraise E()",
    "import os\nos.write(2, b'q' * 150_000)\nos.abort()",  # a crash's last line of stderr joins the error
], ids=["message", "exit", "str", "stderr"])
def test_a_huge_error_text_is_clipped_before_the_observation(target: DreamHouseTarget, code: str) -> None:
    step = target.env.step(Action(data={"code": code}))
    assert target.last.status in ("error", "crash"), target.last
    assert len(target.last.error) <= 6_000 and "characters cut" in target.last.error
    assert len(step.observation.text) < 10_000 and len(str(step.info)) < 10_000
    assert target.healthy()
