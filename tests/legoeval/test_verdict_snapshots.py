"""LEGO-Eval answers recorded before a performance change, which must stay bit-identical.

``data/verdict-snapshots.json`` holds, from the code as it was before the scene index was
made cheaper to check (issue 24):

- ``generated``: the first generated pairs (their constraint texts, labels and every verdict
  with its explanation), so generation and evaluation are both pinned;
- ``relations``: every relation on the ordered pairs (triples for three-place relations) of
  the first objects and every room, wall, door and window of the real and built houses, as the
  decision string plus a digest of each verdict (value, explanation, evidence) — an error is
  recorded as its message;
- ``scaling``: the benchmark's house at two sizes with its twelve constraints;
- ``tools``: every textual tool's answer on a furnished sample house.

Regenerate (only when a change of behaviour is intended, never in an optimisation):
``python tests/legoeval/test_verdict_snapshots.py --write``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from itertools import permutations
from pathlib import Path
from typing import Any

import pytest

from buildbench.scenes.io import load_scene
from buildbench.scenes.model import Scene
from buildbench.scenes.relations import RELATIONS
from buildbench.suites.legoeval.check import deterministic, evaluate

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "verdict-snapshots.json"
HOUSES = sorted([
    *(HERE.parent / "scenes" / "fixtures").glob("*.json"),
    *(HERE.parent / "scenes" / "fixtures" / "real").glob("*.json"),
    *(HERE / "data" / "oracle_houses").glob("*.json"),
])
#: Objects of each house whose ordered pairs are asked.
PAIR_OBJECTS = 5
#: Pairs generated (two tasks each).
PAIRS = 12


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def _answer(scene: Scene, name: str, args: tuple[str, ...]) -> str:
    try:
        v = RELATIONS[name](scene, *args)
    except (KeyError, ValueError, TypeError) as exc:
        return "E" + _digest([type(exc).__name__, str(exc)])
    return ("T" if v.holds else "F") + _digest([repr(v.value), v.explanation, v.evidence])


def _relation_args(scene: Scene, name: str) -> list[tuple[str, ...]]:
    objects = [o.id for o in scene.objects[:PAIR_OBJECTS]]
    rooms = [r.id for r in scene.rooms[:3]]
    others = rooms + [w.id for w in scene.walls[:2]] + [d.id for d in [*scene.doors, *scene.windows][:2]]
    params = [p for p in RELATIONS[name].__code__.co_varnames[1:RELATIONS[name].__code__.co_argcount]]
    if len(params) == 3:
        return list(permutations(objects[:4], 3))
    if params[0].startswith("room"):
        return list(permutations(rooms, 2))
    if params[0] in ("room", "category", "opening"):
        return [(r,) for r in rooms] + [(o.category,) for o in scene.objects[:2]] + [(d,) for d in others[-2:]]
    if len(params) == 1:
        return [(o,) for o in objects]
    return list(permutations(objects, 2)) + [(o, x) for o in objects[:2] for x in others]


def relation_snapshot(path: Path) -> dict[str, str]:
    scene = load_scene(path)
    return {name: " ".join(_answer(scene, name, args) for args in _relation_args(scene, name))
            for name in sorted(RELATIONS)}


def generated_snapshot() -> list[dict[str, Any]]:
    from buildbench.suites.legoeval.tasks import generated_tasks

    out = []
    for task in generated_tasks(PAIRS, seed=0):
        outcome = deterministic(task)
        out.append({"id": task.id, "constraints": [c["text"] for c in task.inputs["constraints"]],
                    "labels": task.target["labels"], "programs": _digest(task.target["programs"]),
                    "verdicts": [[v["holds"], v["explanation"]] for v in outcome["verdicts"]]})
    return out


def scaling_snapshot() -> dict[str, list[list[Any]]]:
    sys.path.insert(0, str(HERE.parents[1] / "benchmarks"))
    from bench_legoeval_eval import scaling_case

    out = {}
    for n in (60, 225):
        scene, constraints = scaling_case(n)
        out[str(n)] = [[v.holds, v.explanation] for v in evaluate(scene, constraints)]
    return out


def tools_snapshot() -> dict[str, str]:
    from buildbench.suites.legoeval.tools import TOOLS, ToolContext, is_image_key, run_tool
    from buildbench.suites.legoeval.tools.sample import sample_house

    scene = sample_house(3, 40, seed=1)
    ids = {"room_ids": [r.id for r in scene.rooms], "wall_ids": [w.id for w in scene.walls],
           "door_ids": [d.id for d in scene.doors], "window_ids": [w.id for w in scene.windows],
           "object_ids": [o.id for o in scene.objects]}
    out = {}
    for name, spec in sorted(TOOLS.items()):
        if spec.group != "textual":
            continue
        ctx = ToolContext.for_scene(scene)
        answer = run_tool(ctx, name, ids[spec.param] if spec.param else None)
        out[name] = _digest({k: v for k, v in answer.items() if not is_image_key(k)})
    return out


def snapshot() -> dict[str, Any]:
    return {
        "generated": generated_snapshot(),
        "relations": {p.name: relation_snapshot(p) for p in HOUSES},
        "scaling": scaling_snapshot(),
        "tools": tools_snapshot(),
    }


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    return json.loads(DATA.read_text())


def test_generated_pairs_and_their_verdicts_are_unchanged(recorded: dict[str, Any]) -> None:
    now = generated_snapshot()
    for was, got in zip(recorded["generated"], now, strict=True):
        assert got == was, was["id"]


@pytest.mark.parametrize("house", HOUSES, ids=lambda p: p.name)
def test_relations_on_real_houses_are_unchanged(recorded: dict[str, Any], house: Path) -> None:
    was = recorded["relations"][house.name]
    got = relation_snapshot(house)
    for name in sorted(RELATIONS):
        assert got[name] == was[name], name


def test_large_house_verdicts_are_unchanged(recorded: dict[str, Any]) -> None:
    assert scaling_snapshot() == recorded["scaling"]


def test_textual_tool_answers_are_unchanged(recorded: dict[str, Any]) -> None:
    assert tools_snapshot() == recorded["tools"]


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/legoeval/test_verdict_snapshots.py --write")
    DATA.write_text(json.dumps(snapshot(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {DATA}")
