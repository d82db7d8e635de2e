"""A body clipped thousands of times made the geometry kernel run for minutes while scoring (in C,
where Python cannot interrupt it): past ``ifc_element_booleans`` boolean operations for one element
the model is refused before anything is tessellated, as the agent's failure naming the element."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from buildbench.harness import get_suite
from buildbench.harness.errors import AgentFailure
from buildbench.limits import limit
from buildbench.suites.bimedit.check.caps import element_costs, over_caps
from buildbench.suites.bimedit.outcome import BimEditOutcome
from buildbench.suites.bimedit.rescore import prediction_problem
from buildbench.suites.bimedit.score import score
from buildbench.suites.bimedit.tasks import from_harness

from .cpu_clock import cpu_seconds

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_house_ifc4x3_ft.ifc"
SHARED_IFC = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "ifc"
WALL_BODY = "(#48));"  # the items of Wall 1's body representation in the fixture


def _clipped(text: str, body: str, first_item: int, n: int) -> str:
    """``text`` with the body item ``first_item`` clipped ``n`` times by distinct tilted half-spaces
    (each cut is real work for the kernel), the chain replacing ``body``."""
    top = max(int(m) for m in re.findall(r"^#(\d+)\s*=", text, re.M))
    lines, prev, k = [], first_item, top + 1
    for i in range(n):
        a = 2 * math.pi * i / n
        lines += [f"#{k}=IFCCARTESIANPOINT(({math.cos(a):.4f},{math.sin(a):.4f},2.5));",
                  f"#{k + 1}=IFCDIRECTION(({math.cos(a):.4f},{math.sin(a):.4f},1.));",
                  f"#{k + 2}=IFCAXIS2PLACEMENT3D(#{k},#{k + 1},$);",
                  f"#{k + 3}=IFCPLANE(#{k + 2});",
                  f"#{k + 4}=IFCHALFSPACESOLID(#{k + 3},.F.);",
                  f"#{k + 5}=IFCBOOLEANCLIPPINGRESULT(.DIFFERENCE.,#{prev},#{k + 4});"]
        prev, k = k + 5, k + 6
    assert body in text
    text = text.replace(body, body.replace(f"#{first_item}", f"#{prev}"), 1)
    head, sep, tail = text.rpartition("ENDSEC;\nEND-ISO")
    assert sep, "the DATA section's end was not found"
    return head + "\n".join(lines) + "\n" + sep + tail


def _write(tmp_path: Path, text: str, name: str = "committed.ifc") -> Path:
    path = tmp_path / name
    path.write_text(text, "latin-1")
    return path


def test_a_clipping_chain_at_the_cap_passes_and_one_more_is_refused_naming_the_element(tmp_path: Path) -> None:
    text = FIXTURE.read_text("latin-1")
    cap = limit("ifc_element_booleans")
    wall = re.search(r"^#(\d+)\s*=\s*IFCWALL\('1W20ImXcWl0KGutJD63H9t'", text, re.M)
    assert wall is not None
    opened = element_costs(FIXTURE)[int(wall.group(1))][1]  # the subtraction of its door opening
    assert opened == 1
    assert over_caps(_write(tmp_path, _clipped(text, WALL_BODY, 48, cap - opened))) is None
    reason = over_caps(_write(tmp_path, _clipped(text, WALL_BODY, 48, cap - opened + 1)))
    assert reason is not None and f"more than {cap:,} boolean operations" in reason, reason
    assert "BUILDBENCH_LIMIT_IFC_ELEMENT_BOOLEANS" in reason
    assert f"element #{wall.group(1)} (IFCWALL)" in reason, reason


def test_openings_count_as_boolean_operations_of_their_host(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    text = FIXTURE.read_text("latin-1")
    hosts = re.findall(r"IFCRELVOIDSELEMENT\([^;]*?,(#\d+),(#\d+)\);", text)
    assert hosts, "the fixture has a wall with an opening"
    host = hosts[0][0]
    before = element_costs(_write(tmp_path, text))[int(host[1:])][1]
    # the same opening voiding its host 5 more times: 5 more subtractions
    top = max(int(m) for m in re.findall(r"^#(\d+)\s*=", text, re.M))
    extra = [f"#{top + 1 + i}=IFCRELVOIDSELEMENT('0extra{i:016d}',$,$,$,{host},{hosts[0][1]});" for i in range(5)]
    head, sep, tail = text.rpartition("ENDSEC;\nEND-ISO")
    more = _write(tmp_path, head + "\n".join(extra) + "\n" + sep + tail, "more.ifc")
    assert element_costs(more)[int(host[1:])][1] == before + 5
    monkeypatch.setenv("BUILDBENCH_LIMIT_IFC_ELEMENT_BOOLEANS", str(before + 4))
    assert over_caps(_write(tmp_path, text)) is None
    reason = over_caps(more)
    assert reason is not None and f"element {host} " in reason, reason


def test_a_3000_clip_prediction_is_the_agents_scored_failure_in_seconds(tmp_path: Path) -> None:
    task = get_suite("bimedit").load_tasks("demo", 0)[0]
    source = Path(from_harness(task).input_ifc).read_text("latin-1")
    body = re.search(r"IFCSHAPEREPRESENTATION\(#\d+,'Body','[^']*',\((#(\d+))[,)]", source)
    assert body is not None
    model = _write(tmp_path, _clipped(source, body.group(0), int(body.group(2)), 3000))
    started = cpu_seconds()
    outcome = BimEditOutcome(committed=True, tool_calls=1, commits=1, model_path=str(model))
    with pytest.raises(AgentFailure, match="over a cap: .*boolean operations"):
        score(task, outcome)  # type: ignore[arg-type]
    problem = prediction_problem(model)  # `bimedit score --pred` and `rescore` refuse it too
    assert problem is not None and "BUILDBENCH_LIMIT_IFC_ELEMENT_BOOLEANS" in problem
    assert cpu_seconds() - started < 30  # the kernel took over 5 minutes on this


def test_the_demo_input_model_scores_as_before(tmp_path: Path) -> None:
    task = get_suite("bimedit").load_tasks("demo", 0)[0]
    assert prediction_problem(Path(from_harness(task).input_ifc)) is None


@pytest.mark.skipif(not SHARED_IFC.is_dir(), reason="../shared/data/ifc (the real models) is absent")
def test_real_models_stay_ten_times_below_the_caps() -> None:
    for path in sorted(SHARED_IFC.glob("*/*.ifc")):
        costs = element_costs(path)
        worst_points = max((p for p, _ in costs.values()), default=0)
        worst_booleans = max((b for _, b in costs.values()), default=0)
        assert 10 * worst_booleans <= limit("ifc_element_booleans"), (path.name, worst_booleans)
        assert 10 * worst_points <= limit("ifc_element_points"), (path.name, worst_points)
        if "malformed" not in path.parts:
            assert over_caps(path) is None, path.name



def _face_set(text: str, triangles: int) -> str:
    """``text`` with Wall 1's body a triangulated face set of ``triangles`` faces over 4 points."""
    top = max(int(m) for m in re.findall(r"^#(\d+)\s*=", text, re.M))
    faces = ",".join("(1,2,3)" if i % 2 else "(1,3,4)" for i in range(triangles))
    lines = [f"#{top + 1}=IFCCARTESIANPOINTLIST3D(((0.,0.,0.),(1.,0.,0.),(1.,1.,0.),(0.,1.,.5)),$);",
             f"#{top + 2}=IFCTRIANGULATEDFACESET(#{top + 1},$,$,({faces}),$);"]
    text = text.replace(WALL_BODY, f"(#{top + 2}));", 1)
    head, sep, tail = text.rpartition("ENDSEC;\nEND-ISO")
    return head + "\n".join(lines) + "\n" + sep + tail


def test_indexed_faces_count_like_points(tmp_path: Path) -> None:
    # 200,000 triangles over 4 points (1.6 MB) ran the kernel over 200 s; the points alone are 4
    text = FIXTURE.read_text("latin-1")
    reason = over_caps(_write(tmp_path, _face_set(text, 200_000)))
    assert reason is not None and "points and indexed faces" in reason, reason
    assert "BUILDBENCH_LIMIT_IFC_ELEMENT_POINTS" in reason
    assert over_caps(_write(tmp_path, _face_set(text, 1_000))) is None
