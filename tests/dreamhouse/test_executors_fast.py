"""The fast executor on its own: errors, limits, persistence, reset, export format, structure."""

from __future__ import annotations

import pytest

from buildbench.sandbox import Limits
from buildbench.suites.dreamhouse.executors import FastExecutor, make_executor
from buildbench.suites.dreamhouse.model import Structure

STUD = """
import bpy
bpy.ops.mesh.primitive_cube_add(size=1, location=(1.0, 2.0, 1.4))
o = bpy.context.active_object
o.name = "Stud_01"
o.scale = (0.038, 0.089, 2.438)
"""


@pytest.fixture(scope="module")
def ex() -> FastExecutor:
    with FastExecutor() as executor:
        yield executor


def test_member_export_matches_released_format(ex: FastExecutor) -> None:
    ex.reset()
    r = ex.run("import bpy\nbpy.data.objects.remove(bpy.data.objects['Cube'])\n" + STUD)
    assert r.ok, r.error
    (m,) = r.members
    assert m["name"] == "Stud_01"
    assert m["location"] == [1.0, 2.0, 1.4]
    assert m["dimensions"] == pytest.approx([0.038, 0.089, 2.438], abs=1e-6)
    assert m["matrix_world"][0] == pytest.approx([0.038, 0.0, 0.0, 1.0], abs=1e-6)
    assert len(m["bbox_world_corners"]) == 8
    assert m["bbox_world_corners"][0] == pytest.approx([0.981, 1.9555, 0.181], abs=1e-6)
    s = r.structure()
    assert isinstance(s, Structure) and s.names == ("Stud_01",)
    assert s.aabb_min_m[0] == pytest.approx([0.981, 1.9555, 0.181], abs=1e-6)


def test_scene_persists_across_runs_and_reset_clears_it(ex: FastExecutor) -> None:
    ex.reset()
    names = [[m["name"] for m in ex.run(STUD).members] for _ in range(3)]
    assert names[-1] == ["Cube", "Stud_01", "Stud_01.001", "Stud_01.002"]  # the paper's duplicate pitfall
    ex.reset()
    assert [m["name"] for m in ex.run("pass").members] == ["Cube"]


def test_each_run_gets_a_fresh_namespace(ex: FastExecutor) -> None:
    ex.run("x = 41")
    r = ex.run("x + 1")
    assert r.status == "error" and r.error == "NameError: name 'x' is not defined"


def test_unsupported_api_names_it_and_keeps_earlier_members(ex: FastExecutor) -> None:
    ex.reset()
    r = ex.run(STUD + "bpy.ops.mesh.primitive_cylinder_add(radius=0.1, depth=2)\n")
    assert r.status == "error"
    assert "fast executor: bpy.ops.mesh.primitive_cylinder_add is not supported" in r.error
    assert "bpy.ops.mesh.primitive_cube_add" in r.error
    assert "<agent code>" in r.traceback
    assert [m["name"] for m in r.members] == ["Cube", "Stud_01"]


@pytest.mark.parametrize(
    ("code", "needle"),
    [
        ("import bpy\nbpy.data.materials.new('Wood')", "bpy.data.materials is not supported"),
        (
            "import bpy\nbpy.context.object.hide_render = True",
            "bpy.types.Object.hide_render is not supported",
        ),
        (
            "import bpy\nbpy.context.object.modifiers.new('b', 'BEVEL')",
            "bpy.types.Object.modifiers is not supported",
        ),
        ("import bpy\nbpy.ops.curve.primitive_bezier_curve_add()", "bpy.ops.curve is not supported"),
        ("from mathutils import Vector\nVector((1, 2, 3)).to_track_quat()", "mathutils.Vector.to_track_quat"),
        ("import bpy\nbpy.ops.mesh.primitive_cube_add(align='VIEW')", "align='VIEW'"),
    ],
)
def test_other_unsupported_apis(ex: FastExecutor, code: str, needle: str) -> None:
    r = ex.run(code)
    assert r.status == "error" and needle in r.error and "fast executor" in r.error


def test_syntax_error_is_reported_with_its_line(ex: FastExecutor) -> None:
    r = ex.run("import bpy\nfor i in range(3)\n    pass\n")
    assert r.status == "error" and r.error.startswith("SyntaxError")
    assert "line 2" in r.traceback


def test_bad_operator_keyword_reads_like_blender(ex: FastExecutor) -> None:
    r = ex.run("import bpy\nbpy.ops.mesh.primitive_cube_add(sizee=1)")
    assert r.error == 'TypeError: Converting py args to operator properties:: keyword "sizee" unrecognized'


def test_stdout_is_captured(ex: FastExecutor) -> None:
    r = ex.run("import bpy\nprint('objects:', len(bpy.data.objects))")
    assert r.ok and "objects:" in r.stdout


def test_infinite_loop_times_out_and_next_run_starts_fresh() -> None:
    # The CPU limit stops the loop; the wall limit leaves room for a slow start on a busy machine.
    with FastExecutor(limits=Limits(wall_s=30.0, cpu_s=1)) as ex:
        ex.run(STUD)
        r = ex.run("while True:\n    pass\n")
        assert r.status == "timeout" and r.scene_lost and "1 s CPU" in r.error
        again = ex.run("pass")
        assert again.ok and again.scene_lost
        assert [m["name"] for m in again.members] == ["Cube"]


def test_named_collection_export_and_fallback() -> None:
    code = (
        "import bpy\ncol = bpy.data.collections.new('T_01')\nbpy.context.scene.collection.children.link(col)\n"
        "ob = bpy.data.objects.new('Sill_1', bpy.data.objects['Cube'].data.copy())\ncol.objects.link(ob)\n"
    )
    with FastExecutor(collection="T_01") as ex:
        # Released fallback while T_01 does not exist: the collection with the most meshes.
        assert [m["name"] for m in ex.run("pass").members] == ["Cube"]
        assert [m["name"] for m in ex.run(code).members] == ["Sill_1"]


def test_make_executor_rejects_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown executor 'cycles'"):
        make_executor("cycles")


def test_run_rejects_non_string_code(ex: FastExecutor) -> None:
    with pytest.raises(TypeError, match="code must be a str"):
        ex.run(b"import bpy")  # type: ignore[arg-type]
