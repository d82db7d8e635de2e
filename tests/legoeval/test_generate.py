"""The seeded generator: houses, instructions, and twins that break exactly what they should."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from buildbench.harness import Task
from buildbench.scenes.io import load_scene
from buildbench.suites.legoeval.check import BASELINES, check, evaluate
from buildbench.suites.legoeval.constraints import Layout, Material, parse, parse_program
from buildbench.suites.legoeval.generate import (
    TYPE_SHARES,
    build_house,
    generate_benchmark,
    make_pair,
    perturb,
    perturbable,
)
from buildbench.suites.legoeval.metrics import agreement_row
from buildbench.suites.legoeval.tasks import generated_tasks

# The module-scoped fixtures (the default benchmark) take seconds to build: its tests share one worker
# under --dist loadgroup, so they are built once, not on both.
pytestmark = pytest.mark.xdist_group("legoeval-generate")


def _bytes(pair: object) -> str:
    return json.dumps([pair.instruction, pair.aligned, pair.misaligned, pair.violated], sort_keys=True)  # type: ignore[attr-defined]


def test_same_seed_same_bytes_and_pairs_are_independent() -> None:
    assert _bytes(make_pair(3, seed=5)) == _bytes(make_pair(3, seed=5))
    assert _bytes(make_pair(3, seed=5)) != _bytes(make_pair(3, seed=6))
    assert _bytes(generate_benchmark(4, seed=5)[3]) == _bytes(make_pair(3, seed=5))


def test_bad_sizes_are_refused() -> None:
    for n in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="n_pairs"):
            generate_benchmark(n)  # type: ignore[arg-type]


def test_houses_have_doors_windows_and_no_floor_overlaps() -> None:
    from buildbench.scenes.collision import collisions

    for i in range(6):
        scene = build_house(np.random.default_rng([11, i]), 2 + i % 4)
        assert len(scene.rooms) == 2 + i % 4 and any(d.room0 == "exterior" for d in scene.doors)
        assert len(scene.doors) == len(scene.rooms)  # a spanning tree plus the front door
        floor = {o.id for o in scene.objects if o.parent_id is None and o.category != "rug"}
        deep = [c for c in collisions(scene, min_depth_m=0.01) if c.a in floor and c.b in floor]
        assert deep == [], deep


@pytest.mark.parametrize("index", range(8))
def test_twin_breaks_exactly_the_intended_constraints(index: int) -> None:
    pair = make_pair(index, seed=2)
    aligned, twin = load_scene(pair.aligned), load_scene(pair.misaligned)
    items = [{"id": c.id, "text": c.text} for c in pair.constraints]  # from text, as an evaluator sees them
    assert all(v.holds is True for v in evaluate(aligned, items))
    broken = [v.id for v in evaluate(twin, items) if v.holds is not True]
    assert broken == list(pair.violated) and 1 <= len(broken) <= 2
    assert aligned.query == twin.query == pair.instruction


def test_perturbations_falsify_their_programs() -> None:
    rng = np.random.default_rng(0)
    done: Counter[str] = Counter()
    tried: Counter[str] = Counter()
    for index in range(4):
        pair = make_pair(index, seed=9)
        scene = load_scene(pair.aligned)
        for c in pair.constraints:
            assert c.program is not None
            kind = type(c.program).__name__
            if not perturbable(c.program):
                assert perturb(scene, c.program, rng) is None
                continue
            tried[kind] += 1
            # a random move can land where the relation still holds: a few tries each
            twins = (perturb(scene, c.program, rng) for _ in range(5))
            done[kind] += any(t is not None and not check(t, c.program).holds for t in twins)
    assert set(done) >= {"Material", "Attribute", "Count", "Relation"}, done
    assert sum(done.values()) >= 0.8 * sum(tried.values()), (done, tried)


def test_layout_and_material_edits() -> None:
    scene = load_scene(make_pair(1, seed=3).aligned)
    rng = np.random.default_rng(1)
    door = scene.doors[0]
    program = Layout("door_between", rooms=(door.room0, door.room1))
    assert check(scene, program).holds and not check(perturb(scene, program, rng), program).holds  # type: ignore[arg-type]
    window = scene.windows[0]
    windows = Layout("window_count", room=window.room0, cmp="ge", n=1)
    assert check(scene, windows).holds and not check(perturb(scene, windows, rng), windows).holds  # type: ignore[arg-type]
    room = scene.rooms[0]
    floor = parse(f"The floor of the {room.id} is {room.floor_material}.")
    assert isinstance(floor, Material) and check(scene, floor).holds
    assert not check(perturb(scene, floor, rng), floor).holds  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def benchmark() -> list[Task]:
    return generated_tasks(130, seed=0)


def test_default_benchmark_has_the_papers_shape(benchmark: list[Task]) -> None:
    aligned = [t for t in benchmark if t.metadata["aligned"]]
    twins = [t for t in benchmark if not t.metadata["aligned"]]
    assert len(aligned) == len(twins) == 130
    n = [t.metadata["n_constraints"] for t in aligned]
    assert 1150 <= sum(n) <= 1350 and 9.0 <= sum(n) / len(n) <= 10.3  # paper: 1,250 and 9.6
    assert min(n) >= 2 and max(n) >= 18
    buckets = Counter(t.metadata["bucket"] for t in aligned)
    assert buckets["8-12"] > buckets["2-7"] > 0 and buckets[">12"] > 0
    types = Counter(c["type"] for t in aligned for c in t.inputs["constraints"])
    for t, share in TYPE_SHARES.items():
        assert abs(types[t] / sum(n) - share) < 0.04, (t, types[t] / sum(n))
    violated = Counter(c["type"] for t in twins for c in t.inputs["constraints"] if c["id"] in t.metadata["violated"])
    assert set(violated) == {"FL", "MS", "OS", "OP"}
    assert all(not t.target["valid"] and 1 <= t.target["labels"].count(False) <= 2 for t in twins)
    for t in aligned[:20]:  # text and program agree
        for c, p in zip(t.inputs["constraints"], t.target["programs"], strict=True):
            assert parse(c["text"]) == parse_program(p)


def test_deterministic_evaluator_agrees_and_constant_baselines_are_chance(benchmark: list[Task]) -> None:
    rows = {name: agreement_row([(t, fn(t)) for t in benchmark]) for name, fn in BASELINES.items()}
    det = rows["deterministic"]
    assert det.holistic.f1 == det.partial.f1 == 1.0 and det.holistic.kappa == det.partial.kappa == 1.0
    assert det.partial.n_unknown == 0
    for name in ("always-valid", "always-invalid"):
        h = rows[name].holistic
        assert (round(h.f1, 2), h.precision, h.recall, h.kappa) == (0.33, 0.25, 0.5, 0.0)
        assert rows[name].partial.kappa == 0.0
