"""Speed work must not change results (issue 24): a seeded sample of generated houses, their
validation reports under both profiles and their Frame + Facade renders hash exactly as
recorded in ``fixtures/speed_snapshot.json``.

Rebuild the record only for an intended change of results (a new ``GENERATOR_VERSION``, a
validator fix, a new rasterizer ``PIXEL_VERSION``): ``.venv/bin/python
tests/dreamhouse/test_speed_snapshot.py --update`` (``--update renders``: the pixel hashes only;
``--update structures``: the structures' digests only, once the reports are unchanged).
The rasterizer's pixels (the default renderer) are the same on every machine and always
checked; GL's depend on the driver, so they are checked only on the driver that recorded them.
The structures' digests are one value for every CPU class: the model's arithmetic calls no
BLAS or LAPACK (``model/rigid.py``), which a child process with another OpenBLAS kernel and
numpy SIMD level checks.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from buildbench.suites.dreamhouse.check import validate, validate_profiles
from buildbench.suites.dreamhouse.generate import PAPER_DATASET_SIZE, dataset_task_ids, generate_structure
from buildbench.suites.dreamhouse.model import Structure

SNAPSHOT = Path(__file__).parent / "fixtures" / "speed_snapshot.json"
_IDS = dataset_task_ids(PAPER_DATASET_SIZE)
#: 13 houses spread over the paper-size dataset's styles, configurations and sizes.
SAMPLE = [str(_IDS[3019 * k % len(_IDS)]) for k in range(13)]
#: Houses whose renders are hashed (rendering is the slow part).
RENDERED = SAMPLE[::3]


def _digest(*parts: Any) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.tobytes() if isinstance(p, np.ndarray) else json.dumps(p, sort_keys=True).encode())
    return h.hexdigest()


def _structure_digest(s: Structure) -> str:
    return _digest(list(s.names), s.sizes_m, s.matrices, list(s.phases), list(s.sections),
                   [list(x) for x in s.supported_by], {k: repr(v) for k, v in s.meta.items()})


def _damaged(s: Structure) -> Structure:
    keep = np.arange(len(s)) % 5 != 0
    return Structure.from_arrays(tuple(np.asarray(s.names)[keep]), s.sizes_m[keep], s.matrices[keep], s.meta)


def structures_and_reports() -> tuple[dict[str, Any], dict[str, Any]]:
    """The structures' digests and the validation reports' digests, by house."""
    digests: dict[str, Any] = {}
    out: dict[str, Any] = {}
    for tid in SAMPLE:
        house = generate_structure(tid, 0)
        digests[tid] = {"frame": _structure_digest(house.structure), "skin": _structure_digest(house.skin)}
        out[tid] = {
            **{p: _digest(validate(house.structure, p).to_json()) for p in ("paper", "released")},
            # Every fifth member gone: the failing paths of the tests, with their messages and measures.
            **{f"{p}_damaged": _digest(validate(_damaged(house.structure), p).to_json()) for p in ("paper", "released")},
        }
    return digests, out


def renders(renderer: str = "raster") -> dict[str, Any]:
    from buildbench.suites.dreamhouse.views import CONDITIONS, render_views
    from buildbench.suites.dreamhouse.views_made_by import made_by

    out: dict[str, Any] = {"made_by": made_by(renderer)}
    for tid in RENDERED:
        house = generate_structure(tid, 0)
        out[tid] = {c: _digest(render_views(house.structure, house.skin, c, renderer=renderer)) for c in CONDITIONS}
    return out


def _recorded() -> dict[str, Any]:
    return json.loads(SNAPSHOT.read_text())


def test_structures_and_validation_are_unchanged() -> None:
    digests, reports = structures_and_reports()
    recorded = _recorded()
    assert reports == recorded["reports"]
    assert digests == recorded["structures"]


#: OpenBLAS's plainest kernel per machine (no FMA, other blocking than the one picked by CPU).
_PLAIN_BLAS = {"x86_64": "Prescott", "aarch64": "ARMV8"}


def _baseline_numpy() -> dict[str, str]:
    """numpy without any of its dispatched SIMD levels (only its compiled-in baseline runs)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__
    except ImportError:  # a numpy without the private table: its levels are left alone
        return {}
    return {"NPY_DISABLE_CPU_FEATURES": " ".join(__cpu_dispatch__)} if __cpu_dispatch__ else {}


def _in_another_cpu_class(code: str) -> object:
    """What ``code`` prints last (JSON), run in a child with OpenBLAS's plainest kernel and numpy at its
    baseline SIMD level; this folder is the child's ``sys.argv[1]`` (to import this module)."""
    kernel = _PLAIN_BLAS.get(platform.machine())
    if kernel is None:
        pytest.skip(f"no plain OpenBLAS kernel known for {platform.machine()}")
    env = {"OPENBLAS_CORETYPE": kernel, "OPENBLAS_NUM_THREADS": "2", **_baseline_numpy()}
    child = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], capture_output=True, text=True,
                           env={**os.environ, **env}, timeout=120, check=False)
    assert child.returncode == 0, child.stderr[-2000:]
    return json.loads(child.stdout.splitlines()[-1])


def test_structures_are_the_same_with_another_blas_kernel_and_simd_level() -> None:
    """Houses generated under another OpenBLAS kernel, thread count and numpy SIMD level hash as
    recorded (on the old LAPACK SVD every house's digest changed under Prescott)."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_speed_snapshot as t; "
            "from buildbench.suites.dreamhouse.generate import generate_structure as g; "
            "hs = {tid: g(tid, 0) for tid in t.SAMPLE[:5]}; "
            "print(json.dumps({k: {'frame': t._structure_digest(h.structure), 'skin': t._structure_digest(h.skin)} "
            "for k, h in hs.items()}))")  # fmt: skip
    assert _in_another_cpu_class(code) == {tid: _recorded()["structures"][tid] for tid in SAMPLE[:5]}


def test_renders_are_the_same_with_another_blas_kernel_and_simd_level() -> None:
    """One house's Frame and Facade renders under another OpenBLAS kernel and numpy SIMD level
    hash as recorded: the render geometry (corners, bounds, cameras) calls no BLAS either
    (``buildbench.render.fixed``)."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_speed_snapshot as t; "
            "from buildbench.suites.dreamhouse.generate import generate_structure as g; "
            "from buildbench.suites.dreamhouse.views import render_views; "
            "h = g(t.RENDERED[0], 0); "
            "print(json.dumps({c: t._digest(render_views(h.structure, h.skin, c)) for c in ('frame', 'facade')}))")
    recorded = _recorded()["renders"][RENDERED[0]]
    assert _in_another_cpu_class(code) == {c: recorded[c] for c in ("frame", "facade")}


def test_both_profiles_at_once_report_as_each_alone() -> None:
    """``validate_profiles`` shares one context between the profiles; the reports are unchanged."""
    for tid in SAMPLE[:5]:
        house = generate_structure(tid, 0)
        for s in (house.structure, _damaged(house.structure)):
            both = validate_profiles(s)
            assert list(both) == ["paper", "released"]
            for profile, report in both.items():
                assert report.to_json() == validate(s, profile).to_json(), (tid, profile)


def test_renders_are_unchanged() -> None:
    """The rasterizer's pixels, on any machine; a new pixel definition renews them on purpose."""
    recorded = _recorded()["renders"]
    got = renders("raster")
    assert got["made_by"] == recorded["made_by"], "the rasterizer's PIXEL_VERSION changed: renew the snapshot"
    assert got == recorded


def test_renders_without_the_c_extension_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rasterizer's numpy fallback (a machine that could not build the C code) draws the
    pinned pixels too: one house's Frame views (~1.3 s)."""
    from buildbench.suites.dreamhouse import views

    monkeypatch.setenv("BUILDBENCH_NATIVE", "0")
    monkeypatch.setattr(views._rasterizers, "raster", None, raising=False)  # this thread's, made afresh
    assert not views._rasterizer().native
    tid = RENDERED[0]
    house = generate_structure(tid, 0)
    drawn = views.render_views(house.structure, house.skin, "frame", renderer="raster")
    assert _digest(drawn) == _recorded()["renders"][tid]["frame"]


def test_gl_renders_are_unchanged() -> None:
    from buildbench.render import RenderUnavailableError
    from buildbench.suites.dreamhouse.views_made_by import made_by

    try:
        stamp = made_by("gl")
    except RenderUnavailableError as exc:
        pytest.skip(f"no headless OpenGL here: {exc}")
    recorded = _recorded()["renders_gl"]
    if stamp != recorded["made_by"]:
        pytest.skip(f"GL pixel hashes were recorded by {recorded['made_by']!r}, this is {stamp!r}")
    assert renders("gl") == recorded


def test_dataset_pngs_hold_the_rendered_pixels(tmp_path: Path) -> None:
    """What the dataset writes decodes to exactly what was rendered."""
    from buildbench.render import load_png
    from buildbench.suites.dreamhouse.views import VIEW_NAMES, render_views
    from buildbench.suites.dreamhouse.views_dataset import render_house

    house = generate_structure(RENDERED[0], 0)
    paths = render_house(house.structure, house.skin, tmp_path)  # the rasterizer: no OpenGL needed
    by_name = {p.name: p for p in paths}
    for condition in ("frame", "facade"):
        images = render_views(house.structure, house.skin, condition)
        for view, image in zip(VIEW_NAMES, images, strict=True):
            assert np.array_equal(load_png(by_name[f"{condition}_{view}.png"]), image), (condition, view)


if __name__ == "__main__" and sys.argv[1:2] == ["--update"]:
    record = _recorded()
    if sys.argv[2:] == ["structures"]:
        # New bits of the same houses (model arithmetic): the reports must not move.
        record["structures"], reports = structures_and_reports()
        if reports != record["reports"]:
            sys.exit("error: the validation reports differ from the snapshot: not only the structures' bits changed")
    else:
        if sys.argv[2:] != ["renders"]:
            record["structures"], record["reports"] = structures_and_reports()
        record["renders"] = renders("raster")
        record["renders_gl"] = renders("gl")
    record.pop("structures_by_cpu", None)
    SNAPSHOT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {SNAPSHOT}")
