"""What `buildbench --help` loads: no suite, simulator, SciPy or NumPy (issue 24: start-up).

A module-set test, not a timed one; the time is measured in benchmarks/bench_cli_startup.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Top-level packages a help screen has no use for.
HEAVY = ("numpy", "scipy", "mujoco", "torch", "shapely", "trimesh", "fcl", "ifcopenshell", "moderngl", "PIL",
         "matplotlib", "ray", "httpx", "pyarrow", "rich", "yaml")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport json, sys; print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, timeout=120)
    return set(json.loads(out.stdout.splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_help_imports_no_suite_and_no_heavy_package() -> None:
    code = ("import sys\nfrom buildbench.cli import main\nsys.argv = ['buildbench', '--help']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass")
    modules = _modules_after(code)
    assert "buildbench.cli.main" in modules  # the help was really produced by the CLI
    assert _heavy(modules) == []
    assert sorted(m for m in modules if m.startswith("buildbench.suites.")) == []
    assert not {"buildbench.harness.runner", "buildbench.harness.agent", "buildbench.harness.store"} & modules


def test_geometry_and_harness_load_their_names_on_first_use() -> None:
    modules = _modules_after("import buildbench.geometry, buildbench.harness.errors\n"
                             "from buildbench.geometry import Boxes, rotation_from_quat_xyzw")
    assert "scipy" not in modules and "buildbench.harness.runner" not in modules
    loaded = _modules_after("from buildbench.geometry import match_min_cost, obb_iou\nmatch_min_cost([[1.0]])")
    assert "scipy.optimize" in loaded  # the name still works, loading what it needs


@pytest.mark.parametrize("package", ["buildbench.geometry", "buildbench.harness"])
def test_every_lazy_name_resolves_to_its_submodule_object(package: str) -> None:
    import importlib

    mod = importlib.import_module(package)
    home = {name: sub for sub, names in mod._NAMES.items() for name in names}
    assert sorted(home) == sorted(mod.__all__)
    for name in mod.__all__:
        assert getattr(mod, name) is getattr(importlib.import_module(f"{package}.{home[name]}"), name), name
    assert set(mod.__all__) <= set(dir(mod))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        mod.nope  # noqa: B018


def test_suite_help_lines_read_from_source_equal_the_loaded_groups() -> None:
    # _suite_doc reads only suites not imported yet (an imported one answers with its loaded
    # group): check in a fresh interpreter, whatever earlier tests of this worker imported.
    code = """
import click
from buildbench.cli import cli, suite_groups
from buildbench.harness.registry import suite_names
ctx = click.Context(cli)
listed = [n for n in suite_names() if suite_groups._suite_cli(n)]
assert {"dreamhouse", "buildarena", "bimedit", "legoeval", "scenerevis"} <= set(listed), listed
for name in listed:
    doc = suite_groups._suite_doc(name)
    assert doc, name
    loaded = cli.get_command(ctx, name)
    assert loaded is not None, name
    for limit in (30, 60, 200):
        assert click.Command(name, help=doc).get_short_help_str(limit) == loaded.get_short_help_str(limit), name
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]


def test_help_lists_every_suite_group_and_core_command() -> None:
    out = subprocess.run([sys.executable, "-m", "buildbench", "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    listed = {line.split()[0] for line in out.stdout.split("Commands:")[1].splitlines() if line.strip()}
    assert {"dreamhouse", "buildarena", "bimedit", "legoeval", "scenerevis", "run", "suites", "report"} <= listed
