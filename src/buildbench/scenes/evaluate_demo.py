"""The demo's generator comparison: two sets of generated rooms through ``scenes evaluate``.

``scripted``: SceneReVis's seeded room generator (:func:`~buildbench.suites.scenerevis.
generate.rooms.generate_rooms`, rooms that pass the source filter). ``degraded``: the same
rooms with half their objects moved toward the room's middle, turned or rescaled by the
calibration corruption of the SceneReVis ``degraded`` agent (:func:`~buildbench.suites.
scenerevis.degrade.corrupt_calls`), a deliberately worse generator. Both folders are written
as SceneReVis flat JSON with a ``prompts.jsonl`` whose instructions (LEGO-Eval template
sentences) name the room type and its core furniture, then scored by
:func:`buildbench.scenes.evaluate.evaluate` like any generator's outputs.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from rich.table import Table

from buildbench.harness import Store

#: Rooms per generator: one bedroom, one living room (LEGO-Eval scores each episode in a process of its own, ~0.8 s).
DEMO_ROOMS = 2
DEMO_ROOM_TYPES = ("bedroom", "living room")
DEGRADE_FRACTION = 0.5


def _apply(room: dict[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any]:
    out = copy.deepcopy(room)
    by_id = {o["id"]: o for o in out["objects"]}
    field_of = {"move_object": ("new_position", "pos"), "rotate_object": ("new_rotation", "rot"),
                "scale_object": ("new_size", "size")}
    for call in calls:
        src, dst = field_of[call["name"]]
        by_id[call["arguments"]["id"]][dst] = call["arguments"][src]
    return out


def _instruction(room: dict[str, Any]) -> str:
    from buildbench.suites.scenerevis.generate.rooms import ROOM_TEMPLATES

    core = ROOM_TEMPLATES[room["room_type"]][0]
    sentences = [f"The house has a {room['room_type']}."]
    sentences += [f"There is a {name}." for name in core]
    sentences.append(f"The {core[0]} is against a wall.")
    return " ".join(sentences)


def write_generators(folder: Path, n: int = DEMO_ROOMS, seed: int = 0) -> list[Path]:
    """The ``scripted`` and ``degraded`` generator folders under ``folder``."""
    from buildbench.suites.scenerevis.degrade import corrupt_calls
    from buildbench.suites.scenerevis.generate.rooms import generate_rooms

    rooms = generate_rooms(n, seed, DEMO_ROOM_TYPES)
    out = []
    for name in ("scripted", "degraded"):
        gen = folder / name
        gen.mkdir(parents=True)
        prompts = []
        for i, room in enumerate(rooms):
            scene = room if name == "scripted" else _apply(room, corrupt_calls(room["objects"], DEGRADE_FRACTION,
                                                                                 seed + i))
            file = f"room_{i}.json"
            (gen / file).write_text(json.dumps(scene), encoding="utf-8")
            prompts.append(json.dumps({"scene": file, "instruction": _instruction(room),
                                       "room": room["room_type"]}))
        (gen / "prompts.jsonl").write_text("\n".join(prompts) + "\n", encoding="utf-8")
        out.append(gen)
    return out


def comparison_table(runs: dict[str, Path]) -> Table:
    """One row per generator: LEGO-Eval's success rates and SceneReVis's physics and judge."""
    from buildbench.suites.legoeval.report import table3_row
    from buildbench.suites.scenerevis.report import RULE_MARK, VBL_SCALE

    def episodes(suite: str) -> dict[str, list[Any]]:
        groups: dict[str, list[Any]] = {}
        if suite in runs:
            with Store(runs[suite], create=False) as store:
                for ep in store.episodes():
                    groups.setdefault(ep.agent, []).append(ep)
        return groups

    lego, revis = episodes("legoeval"), episodes("scenerevis")

    def mean(eps: list[Any], key: str, scale: float = 1.0) -> str:
        vals = [float(e.metrics[key]) * scale for e in eps if isinstance(e.metrics.get(key), int | float)]
        vals = [v for v in vals if v == v]
        return f"{sum(vals) / len(vals):.1f}" if vals else "–"

    table = Table(title="Scene generators through `buildbench scenes evaluate` (offline evaluators)",
                  caption=f"LEGO-Eval: deterministic evaluator, success rates %; SceneReVis: OBR/CNR %, "
                          f"VBL = voxel loss x 10^3, Avg = {RULE_MARK}")
    for col in ("generator", "scenes", "holistic SR", "partial SR", "OBR", "CNR", "VBL", "Avg"):
        table.add_column(col, no_wrap=True, justify="left" if col == "generator" else "right")
    for name in sorted(set(lego) | set(revis)):
        row = table3_row(name, lego.get(name, []))
        eps = revis.get(name, [])

        def pct(value: Any) -> str:
            return "–" if value is None else f"{value:.1f}"

        table.add_row(name, str(max(len(lego.get(name, [])), len(eps))), pct(row["holistic_sr"]), pct(row["avg"]),
                      mean(eps, "oob_rate"), mean(eps, "collision_rate"), mean(eps, "voxel_loss_m3", VBL_SCALE),
                      mean(eps, "Avg"))
    return table


def run_demo(run_dir: Path) -> Table:
    """Write both generators under ``run_dir``, score them into ``run_dir/run``, and return the table."""
    from buildbench.scenes.evaluate import evaluate

    folders = write_generators(run_dir / "outputs")
    runs = evaluate(folders, "scenerevis-flat", run_dir / "run")
    return comparison_table(runs)
