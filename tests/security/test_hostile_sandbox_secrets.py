"""Agent code could import all of buildbench inside the sandbox, the source tree being bound
whole: ``make_task(id)`` (DreamHouse) or BIM-Edit's scene and task generators give the ground truth
the agent is scored against (matched by the lot sizes the prompt states). The sandbox now shows
only ``buildbench.sandbox``, the setup hook's module and the modules its caller names
(`buildbench.sandbox._launch.package_view`); the generators and verifiers do not exist inside.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import buildbench
from buildbench.sandbox import Limits, Worker, run_code

from .conftest import BWRAP, ROOMY_WALL_S, BimEditTarget, DreamHouseTarget, needs_bwrap

LIMITS = Limits(wall_s=10.0, cpu_s=10, memory_mb=512)
ROOT = Path(buildbench.__file__).resolve().parent
PROBE = (
    "import importlib, os\nseen = {}\n"
    "for name in ('buildbench.suites.dreamhouse.tasks', 'buildbench.suites.dreamhouse.generate',\n"
    "             'buildbench.suites.bimedit.generate', 'buildbench.harness.runner', 'buildbench.sandbox._worker'):\n"
    "    try:\n        importlib.import_module(name)\n        seen[name] = 'imported'\n"
    "    except ImportError as exc:\n        seen[name] = type(exc).__name__\n"
    f"seen['listing'] = sorted(os.listdir({str(ROOT)!r}))\n"
)


@needs_bwrap
@pytest.mark.parametrize("readable", [(), (str(ROOT.parent),)], ids=["source-tree", "source-named-readable"])
def test_only_the_sandbox_package_of_buildbench_exists_inside(readable: tuple[str, ...]) -> None:
    # Naming the whole source tree readable (as an installed wheel lies inside the bound
    # installation) still shows only the package view: an empty folder is mounted over the rest.
    out = run_code(PROBE + "result = seen", limits=LIMITS, isolation="bwrap", readable=readable)
    assert out.status == "ok", out
    listing = out.result.pop("listing")
    assert set(listing) <= {"__init__.py", "__pycache__", "sandbox"}, listing
    hidden = {k: v for k, v in out.result.items() if k != "buildbench.sandbox._worker"}
    assert set(hidden.values()) == {"ModuleNotFoundError"}, out.result
    assert out.result["buildbench.sandbox._worker"] == "imported"


@needs_bwrap
def test_dreamhouse_agent_code_cannot_make_its_task() -> None:
    target = DreamHouseTarget(ROOMY_WALL_S)
    try:
        out = target.run("from buildbench.suites.dreamhouse.tasks import make_task\nmake_task('RN_01_0001')\n")
        assert out.status == "error" and "ModuleNotFoundError" in out.error, out
        assert target.healthy()  # the executor itself imports what it needs
    finally:
        target.close()


@needs_bwrap
def test_bimedit_agent_code_cannot_run_the_generators(tmp_path: Path) -> None:
    pytest.importorskip("ifcopenshell", reason="BIM-Edit needs ifcopenshell")
    target = BimEditTarget(tmp_path, ROOMY_WALL_S)
    try:
        out = target.run(PROBE + "print('@@' + __import__('json').dumps(seen))\n")
        assert out.status == "ok" and out.report["buildbench.suites.bimedit.generate"] == "ModuleNotFoundError", out
        assert target.healthy()
    finally:
        target.close()


@pytest.mark.parametrize("name", ["buildbench.nope", "os", "buildbenchx.y"])
def test_a_module_outside_buildbench_or_unknown_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="modules"):
        Worker(modules=(name,), isolation="bwrap" if BWRAP else "process")
