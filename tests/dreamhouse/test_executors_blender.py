"""The blender executor: how it finds Blender, reports errors, keeps and resets the scene."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from buildbench.sandbox import Limits
from buildbench.suites.dreamhouse.executors import BlenderExecutor, BlenderUnavailable, find_blender_python


def _venv_python() -> Path:
    try:
        return find_blender_python()
    except BlenderUnavailable as exc:
        pytest.skip(f"real Blender not installed ({exc}); create it with tools/setup_blender.sh")


def test_missing_venv_says_how_to_create_it(tmp_path: Path) -> None:
    with pytest.raises(BlenderUnavailable, match="tools/setup_blender.sh"):
        BlenderExecutor(venv=tmp_path / "nowhere")


def test_missing_binary_is_named(tmp_path: Path) -> None:
    with pytest.raises(BlenderUnavailable, match="does not exist"):
        BlenderExecutor(blender_binary=tmp_path / "blender")


def test_errors_persistence_and_reset_in_real_blender() -> None:
    _venv_python()
    with BlenderExecutor() as ex:
        first = ex.run(
            "import bpy\nbpy.ops.mesh.primitive_cube_add(size=1)\nbpy.context.object.name = 'Post'\nprint('made')"
        )
        assert first.ok and "made" in first.stdout
        second = ex.run(
            "import bpy\nbpy.ops.mesh.primitive_cube_add(size=1)\nbpy.context.object.name = 'Post'\nraise KeyError('boom')"
        )
        assert second.status == "error" and second.error == "KeyError: 'boom'"
        assert "<agent code>" in second.traceback
        assert [m["name"] for m in second.members] == ["Cube", "Post", "Post.001"]
        broken = ex.run("import bpy\nif True\n")
        assert broken.status == "error" and broken.error.startswith("SyntaxError")
        ex.reset()
        assert [m["name"] for m in ex.run("pass").members] == ["Cube"]


def test_blender_binary_command_line(tmp_path: Path) -> None:
    """A stand-in ``blender`` that checks the arguments it gets, then runs the driver on the wheel."""
    python = _venv_python()
    fake = tmp_path / "blender"
    fake.write_text(
        "#!/bin/sh\n"
        '[ "$1 $2 $3" = "--background --factory-startup --python" ] || { echo "bad args: $*" >&2; exit 3; }\n'
        'driver="$4"; shift 4\n'
        f'exec "{python}" "$driver" "$@"\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    # The stand-in lives under pytest's /tmp, which the bwrap sandbox replaces with its own.
    with BlenderExecutor(blender_binary=fake, isolation="process") as ex:
        r = ex.run("import bpy\nbpy.context.object.name = 'Sill_1'")
        assert r.ok, r.error
        assert [m["name"] for m in r.members] == ["Sill_1"]


def test_infinite_loop_in_blender_times_out_and_restarts() -> None:
    _venv_python()
    limits = Limits(wall_s=60.0, cpu_s=1, memory_mb=4096, max_processes=256)
    with BlenderExecutor(limits=limits) as ex:
        r = ex.run("while True:\n    pass\n")
        assert r.status == "timeout" and r.scene_lost and "1 s CPU" in r.error
        again = ex.run("pass")
        assert again.ok and again.scene_lost and [m["name"] for m in again.members] == ["Cube"]
