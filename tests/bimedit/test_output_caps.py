"""An agent's IFC model past the caps (`check.caps`) is refused before scoring, quickly, as its failure."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from buildbench.harness import get_suite
from buildbench.harness.errors import AgentFailure
from buildbench.suites.bimedit.check.caps import over_caps
from buildbench.suites.bimedit.outcome import BimEditOutcome
from buildbench.suites.bimedit.score import score
from buildbench.suites.bimedit.tasks import from_harness

from .cpu_clock import cpu_seconds

EXTRA_POINTS = 1_000_000


def _with_extra_points(source: Path, target: Path, n: int) -> None:
    """``source`` with a polyline of ``n`` points added to the body of its first element's shape."""
    text = source.read_text()
    shape = re.search(r"^#(\d+)=\s*IFCPRODUCTDEFINITIONSHAPE\(([^,]*),([^,]*),\(([^)]*)\)\);$", text, re.M)
    assert shape is not None
    top = max(int(m) for m in re.findall(r"^#(\d+)=", text, re.M))
    context = re.search(r"IFCSHAPEREPRESENTATION\((#\d+),", text)
    assert context is not None
    first = top + 1
    lines = [f"#{first + i}=IFCCARTESIANPOINT(({i * 0.001:.3f},0.,0.));" for i in range(n)]
    polyline, representation = first + n, first + n + 1
    refs = ",".join(f"#{first + i}" for i in range(n))
    lines.append(f"#{polyline}=IFCPOLYLINE(({refs}));")
    lines.append(f"#{representation}=IFCSHAPEREPRESENTATION({context.group(1)},'Axis','Curve3D',(#{polyline}));")
    number, a, b, reps = shape.groups()
    text = text.replace(shape.group(0), f"#{number}=IFCPRODUCTDEFINITIONSHAPE({a},{b},({reps},#{representation}));")
    head, sep, tail = text.rpartition("ENDSEC;\nEND-ISO")
    assert sep, "the DATA section's end was not found"
    target.write_text(head + "\n".join(lines) + "\n" + sep + tail)


@pytest.fixture(scope="module")
def task_and_input() -> tuple[object, Path]:
    task = get_suite("bimedit").load_tasks("demo", 0)[0]
    return task, Path(from_harness(task).input_ifc)


def test_a_real_model_is_within_the_caps(task_and_input: tuple[object, Path]) -> None:
    assert over_caps(task_and_input[1]) is None


def test_a_million_extra_points_are_refused_quickly_as_the_agents_failure(
        tmp_path: Path, task_and_input: tuple[object, Path]) -> None:
    task, source = task_and_input
    model = tmp_path / "committed.ifc"
    _with_extra_points(source, model, EXTRA_POINTS)
    assert model.stat().st_size > 40_000_000
    started, wall = cpu_seconds(), time.monotonic()
    reason = over_caps(model)
    assert reason is not None and "more than 100,000 points" in reason, reason
    assert re.search(r"element #\d+ \(IFC[A-Z]+\)", reason), reason  # names the element it refused
    outcome = BimEditOutcome(committed=True, tool_calls=1, commits=1, model_path=str(model))
    with pytest.raises(AgentFailure, match="over a cap"):
        score(task, outcome)  # type: ignore[arg-type]
    # Two passes over 43 MB of STEP text, no IfcOpenShell: seconds, where scoring took minutes.
    cpu = cpu_seconds() - started
    print(f"{EXTRA_POINTS:,} extra points ({model.stat().st_size / 1e6:.0f} MB) refused twice in {cpu:.1f} CPU s "
          f"({time.monotonic() - wall:.1f} s wall)")
    assert cpu < 60


def test_a_few_extra_points_are_not_refused(tmp_path: Path, task_and_input: tuple[object, Path]) -> None:
    model = tmp_path / "committed.ifc"
    _with_extra_points(task_and_input[1], model, 1_000)
    assert over_caps(model) is None


def test_the_entity_cap_is_configurable(tmp_path: Path, task_and_input: tuple[object, Path],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDBENCH_LIMIT_IFC_ENTITIES", "100")
    reason = over_caps(task_and_input[1])
    assert reason is not None and "over the cap of 100" in reason
