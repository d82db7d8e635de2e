"""Targets for the attack tests: each suite's real agent path where agent code runs.

- ``run_code``: a sandbox `Worker` (what ``run_code`` starts), used directly;
- ``dreamhouse``: the DreamHouse env, agent code as a python action run by the fast executor;
- ``bimedit``: the BIM-Edit env, agent code as an ``execute_ifc_code`` tool call.

Attack code reports what it saw by printing one line ``@@<json>``; each target turns its
suite's answer into an `Outcome`. Targets live for a whole module, so every attack also
checks that the env survived all attacks before it (`Target.healthy`).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from buildbench.sandbox import Limits, Worker, sandbox_available

from ..worker_starts import roomy_starts

BWRAP = bool(sandbox_available())
ISOLATION = "bwrap" if BWRAP else "process"
needs_bwrap = pytest.mark.skipif(not BWRAP, reason=f"needs the bwrap sandbox: {sandbox_available().detail}")
#: The sandbox has a uid of its own only under bwrap started as root.
needs_sandbox_uid = pytest.mark.skipif(not BWRAP or os.geteuid() != 0,
                                       reason="needs the bwrap sandbox started as root (a uid of its own)")

WALL_S = 4.0
DISK_MB = 16
LIMITS = Limits(wall_s=WALL_S, cpu_s=int(WALL_S), memory_mb=1024, max_processes=32, output_bytes=200_000,
                disk_mb=DISK_MB)
#: The limit per call for tests whose subject is not the wall limit: a worker's start (the BIM-Edit
#: setup hook imports IfcOpenShell and opens the model) runs under the call's wall limit, and at load
#: ~20 on 2 cores it took longer than `WALL_S`; so did a worker's start plus a memory bomb filling
#: 1.5 GiB on a loaded CI machine (2 s of it on a quiet one).
ROOMY_WALL_S = 60.0


#: What an agent would run to recover its work folder: remove what the attacks left (``fill*``).
CLEAN_UP = "import os as _os\nfor _n in _os.listdir('.'):\n    if _n.startswith('fill'):\n        _os.remove(_n)\n"


@dataclass
class Outcome:
    """How one attack ended, whatever the suite."""

    status: str
    error: str
    stdout: str

    @property
    def report(self) -> Any:
        """The value the attack printed as ``@@<json>`` (None when it printed none)."""
        for line in reversed(self.stdout.splitlines()):
            if line.startswith("@@"):
                return json.loads(line[2:])
        return None


class Target:
    """One agent path: run attack code, say whether the harness side is still fine."""

    name = ""
    workdir: Path

    def run(self, code: str) -> Outcome:
        raise NotImplementedError

    def healthy(self) -> bool:
        """Run ordinary code; raise AssertionError saying what went wrong, else True."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class RunCodeTarget(Target):
    name = "run_code"

    def __init__(self, wall_s: float = WALL_S) -> None:
        limits = replace(LIMITS, wall_s=wall_s, cpu_s=math.ceil(wall_s))
        self.worker = roomy_starts(Worker(limits=limits, isolation=ISOLATION), ROOMY_WALL_S)
        self.workdir = self.worker.workdir

    def run(self, code: str) -> Outcome:
        envelope = self.worker.call(code)
        return Outcome(envelope.status, envelope.error or "", envelope.stdout)

    def healthy(self) -> bool:
        envelope = self.worker.call(CLEAN_UP + "result = 6 * 7")
        assert envelope.status == "ok" and envelope.result == 42, envelope
        return True

    def close(self) -> None:
        self.worker.close()


class DreamHouseTarget(Target):
    name = "dreamhouse"

    def __init__(self, wall_s: float = WALL_S) -> None:
        from buildbench.suites.dreamhouse.env import make_env
        from buildbench.suites.dreamhouse.executors import fast
        from buildbench.suites.dreamhouse.options import DreamHouseOptions
        from buildbench.suites.dreamhouse.tasks import make_task

        self.task = make_task("RN_01_0001")
        self.env = make_env(self.task, DreamHouseOptions(images="off", isolation=ISOLATION))
        self.env.reset(self.task)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(fast, "FAST_LIMITS", replace(LIMITS, wall_s=wall_s, cpu_s=math.ceil(wall_s)))
            executor = self.env._executor_for_run()
        roomy_starts(executor._worker, ROOMY_WALL_S)
        self.last: Any = None
        run = executor.run

        def recording_run(code: str) -> Any:
            self.last = run(code)
            return self.last

        executor.run = recording_run
        self.workdir = executor._worker.workdir
        self.checks = 0

    def run(self, code: str) -> Outcome:
        from buildbench.harness import Action

        self.last = None
        self.env.step(Action(data={"code": code}))
        assert self.last is not None, "the env did not run the code"
        return Outcome(self.last.status, self.last.error or "", self.last.stdout)

    def healthy(self) -> bool:
        from buildbench.harness import Action

        self.checks += 1
        code = (CLEAN_UP + "import bpy\nbpy.ops.mesh.primitive_cube_add(size=1)\n"
                f"print('healthy', len(bpy.data.objects), {self.checks})\n")
        step = self.env.step(Action(data={"code": code}))
        ran = f" {self.checks}\n" in self.last.stdout and "healthy" in self.last.stdout
        assert self.last.status == "ok" and ran and self.last.members and "invalid" not in step.info, \
            (self.last, step.info)
        return True

    def close(self) -> None:
        self.env.close()


class BimEditTarget(Target):
    name = "bimedit"

    def __init__(self, tmp: Path, wall_s: float = WALL_S) -> None:
        from buildbench.suites.bimedit.env import BimEditEnv
        from buildbench.suites.bimedit.options import BimEditOptions

        self.out = tmp / "out"
        self.env = BimEditEnv(BimEditOptions(call_timeout_s=wall_s, memory_mb=1536, max_calls=500, disk_mb=DISK_MB,
                                             isolation=ISOLATION), output_dir=self.out)
        self.env.reset(bim_task(tmp))
        roomy_starts(self.env._ep.worker, ROOMY_WALL_S)
        self.workdir = self.env._ep.workdir
        self.calls = 0
        self.commits = 0

    def _call(self, code: str) -> dict[str, Any]:
        from buildbench.harness import Action
        from buildbench.llm import ToolCall

        self.calls += 1
        action = Action(tool_calls=[ToolCall(id=f"c{self.calls}", name="execute_ifc_code",
                                             arguments={"code": code})])
        return json.loads(self.env.step(action).observation.tool_results[0][1])

    def run(self, code: str) -> Outcome:
        reply = self._call(code)
        return Outcome(reply["status"], reply.get("error") or "", reply.get("stdout") or "")

    def healthy(self) -> bool:
        self.commits += 1
        name = f"healthy-{self.commits}"
        reply = self._call(CLEAN_UP + f"ifc.by_type('IfcDoor')[0].Name = {name!r}\ncommit()")
        # The harness keeps the bytes of the last good commit (the outcome writes those, once).
        kept = self.env._ep.committed_bytes or b""
        assert reply.get("committed") is True and name.encode() in kept and kept.startswith(b"ISO-10303-21"), reply
        return True

    def close(self) -> None:
        outcome = self.env.outcome()
        self.env.close()
        kept = (self.out / "committed.ifc").read_bytes()
        assert outcome.committed and f"healthy-{self.commits}".encode() in kept


def bim_task(tmp: Path) -> Any:
    """A small BIM-Edit task on a generated scene (the ground truth is never scored here)."""
    from buildbench.suites.bimedit.generate.scenes import write_scene
    from buildbench.suites.bimedit.tasks import BimTask

    model = write_scene("simple", 3, tmp).path
    return BimTask(task_id="DOR-UPD-DIR-A-001", element="door", operation="update", category="direct",
                   scene="simple", instruction="Rename the door.", input_ifc=str(model),
                   ground_truth_ifc=str(model)).to_harness()


def _make_target(name: str, tmp_path_factory: pytest.TempPathFactory, wall_s: float) -> Target:
    if name == "run_code":
        return RunCodeTarget(wall_s)
    if name == "dreamhouse":
        return DreamHouseTarget(wall_s)
    pytest.importorskip("ifcopenshell", reason="BIM-Edit needs ifcopenshell")
    return BimEditTarget(tmp_path_factory.mktemp("bimedit"), wall_s)


@pytest.fixture(scope="module", params=["run_code", "dreamhouse", "bimedit"])
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    made = _make_target(request.param, tmp_path_factory, WALL_S)
    yield made
    made.close()


@pytest.fixture(scope="module", params=["run_code", "dreamhouse", "bimedit"])
def roomy_target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """A target whose calls have `ROOMY_WALL_S`: for attacks whose subject is another limit."""
    made = _make_target(request.param, tmp_path_factory, ROOMY_WALL_S)
    yield made
    made.close()


@pytest.fixture()
def canary(tmp_path: Path) -> Iterator[Path]:
    """A host file nothing in a sandbox may read, change or remove."""
    folder = tmp_path / "canary"
    folder.mkdir()
    (folder / "secret.txt").write_text("canary-secret")
    yield folder
    assert (folder / "secret.txt").read_text() == "canary-secret"
    shutil.rmtree(folder)
