"""Record the original LEGO-Eval tools' answers on real houses (never imported by buildbench).

Imports the unmodified ``evaluation/functions.py`` and ``func_utils.py`` of
gyeomh/LEGO-EVAL (commit 35c227c) from ``--orig`` and calls every tool that computes from
the house JSON with every valid argument (each id alone, all ids together, the empty list, an
unknown id). One JSON line per call::

    {"house": "<path from the repo root>", "tool": name, "args": [...],
     "result": {...} | "exception": "Type: message"}

Images are recorded as the string ``"<image>"`` under their keys (only the key names are
compared). What runs without AI2-THOR, and how:

* the ten textual tools run as they are; ``get_object_info`` reads the annotation file
  written by ``prepare.py`` (``--work``);
* ``get_topdown_scene``, ``get_topdown_room``, ``get_wall_scene`` load pre-rendered images,
  ``get_material_image`` the repository's swatches and ``get_multiview_rendered_object``
  Hugging Face renders: blank 8x8 PNGs are written under ``--work`` in their place (the
  swatches under the names of the repository's ``floor_wall_material_image/*.png``);
* ``get_spatial_relation`` draws through AI2-THOR: its renderer ``objs_relation_image`` is
  replaced by one returning ``"<image>"`` so the keys of ``functions.get_spatial_relation``
  are recorded; ``get_frontview_object`` / ``get_topdown_object`` need the simulator and are
  not run.

Modules the tool module imports only for rendering or the hosted models (``ai2thor``,
``cv2``, ``langsmith``, the original's ``models``) are replaced by empty stand-ins when they
are not installed. Each call gets a fresh copy of the house (the original's door and window
tools write into the house they are given). Usage (any Python with pillow, numpy, pandas,
pyyaml, python-dotenv, shapely, scipy, tqdm)::

    python tools/legoeval_oracle/run_original.py --orig /tmp/lego_orig --work /tmp/lego_work \\
        --materials MATERIAL_NAMES.txt --out tests/legoeval/data/differential-original-tools.jsonl
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
UNKNOWN = "no such id"
BLANK_PX = 8


def stand_in(name: str, **attrs: Any) -> None:
    """An empty module ``name`` (and its parents) unless the real one imports."""
    try:
        importlib.import_module(name)
        return
    except ImportError:
        pass
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        sub = ".".join(parts[:i])
        if sub not in sys.modules:
            sys.modules[sub] = types.ModuleType(sub)
    for key, value in attrs.items():
        setattr(sys.modules[name], key, value)


class _Unavailable:
    """Stands for a class the textual tools never instantiate."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("needs AI2-THOR / a hosted model, not available to the oracle")


def load_original(orig: Path) -> Any:
    stand_in("ai2thor.controller", Controller=_Unavailable)
    stand_in("ai2thor.hooks.procedural_asset_hook", ProceduralAssetHookRunner=_Unavailable)
    stand_in("cv2")
    stand_in("langsmith", traceable=lambda *a, **k: (a[0] if a and callable(a[0]) else (lambda f: f)))
    sys.path.insert(0, str(orig / "evaluation"))
    try:
        importlib.import_module("models")
    except ImportError:
        stand_in("models", LLM=_Unavailable, VLLM=_Unavailable)
    functions: Any = importlib.import_module("functions")
    functions.objs_relation_image = lambda scene, pair, sys_args, my_controller=None: "<image>"
    return functions


def blank_png(path: Path) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGBA", (BLANK_PX, BLANK_PX), (255, 255, 255, 255)).save(path)


def ids(house: dict[str, Any], key: str) -> list[str]:
    return [str(r["id"]) for r in house.get(key) or [] if isinstance(r, dict) and "id" in r]


def materials(house: dict[str, Any]) -> list[str]:
    names = [(r.get("floorMaterial") or {}).get("name") for r in house.get("rooms") or []]
    names += [(r.get("wallMaterial") or {}).get("name") for r in house.get("rooms") or []]
    names += [(w.get("material") or {}).get("name") for w in house.get("walls") or []]
    return list(dict.fromkeys(n for n in names if isinstance(n, str)))


def stage_images(work: Path, house: dict[str, Any], material_names: list[str]) -> None:
    """Blank files where the image tools look (the scene's ``index`` is 0)."""
    scene_dir = work / "data" / "data_0" / "scene_images"
    blank_png(scene_dir / "scene*|*topdown_scene*|*image.png")
    for rid in ids(house, "rooms"):
        blank_png(scene_dir / f"{rid}*|*topdown_room*|*image.png")
    for wid in ids(house, "walls"):
        blank_png(scene_dir / f"{wid}*|*wall in scene*|*image.png")
    for key in ("objects", "doors", "windows"):
        for item in house.get(key) or []:
            for view in ("front", "right", "left", "top", "back"):
                target = work / "object_images" / f"{item.get('assetId')}_{view}.png"
                if not target.exists():
                    blank_png(target)
    for name in material_names:
        target = work / "materials" / f"{name}.png"
        if not target.exists():
            blank_png(target)


def id_calls(every: list[str], *, extra: Sequence[list[str]] = ()) -> Iterator[list[Any]]:
    """Each id alone, all of them together, and the extra lists."""
    for one in every:
        yield [one]
    if len(every) > 1:
        yield list(every)
    yield from extra


def relation_groups(house: dict[str, Any]) -> Iterator[list[Any]]:
    """Per room: its first two objects, then a door, a window and a wall with its first object;
    one call with every group of the house."""
    groups: list[list[str]] = []
    for rid in ids(house, "rooms"):
        objs = [o["id"] for o in house.get("objects") or [] if o.get("roomId") == rid]
        others = [d["id"] for d in house.get("doors") or [] if rid in (d.get("room0"), d.get("room1"))][:1]
        others += [w["id"] for w in house.get("windows") or [] if w.get("roomId") == rid][:1]
        others += [w["id"] for w in house.get("walls") or [] if w.get("roomId") == rid][:1]
        if len(objs) >= 2:
            groups.append(objs[:2])
        if objs:
            groups += [[o, objs[0]] for o in others]
    for g in groups:
        yield [g]
    if len(groups) > 1:
        yield groups


def calls(house: dict[str, Any], swatches: list[str]) -> Iterator[tuple[str, list[Any]]]:
    rooms, walls = ids(house, "rooms"), ids(house, "walls")
    doors, windows, objects = ids(house, "doors"), ids(house, "windows"), ids(house, "objects")
    rooms_extra = [[], [UNKNOWN]]
    yield "get_room_list", []
    yield "get_topdown_scene", []
    for tool in ("get_room_info", "get_wall_list", "get_door_list", "get_window_list", "get_object_list",
                 "get_topdown_room"):
        for args in id_calls(rooms, extra=rooms_extra):
            yield tool, args
    for tool, every in (("get_wall_info", walls), ("get_wall_scene", walls), ("get_door_info", doors),
                        ("get_window_info", windows), ("get_object_info", objects),
                        ("get_multiview_rendered_object", objects + doors + windows)):
        for args in id_calls(every, extra=[[UNKNOWN]]):
            yield tool, args
    used = materials(house)
    for args in id_calls(used, extra=[[UNKNOWN]] + ([[swatches[0]]] if swatches and swatches[0] not in used else [])):
        yield "get_material_image", args
    for args in relation_groups(house):
        yield "get_spatial_relation", args


def child_ids(house: dict[str, Any]) -> list[str]:
    """Ids of objects nested under ``children`` (ProcTHOR's small objects), at any depth."""
    out: list[str] = []
    stack = [c for o in house.get("objects") or [] for c in o.get("children") or []]
    while stack:
        child = stack.pop(0)
        if isinstance(child, dict) and "id" in child:
            out.append(str(child["id"]))
            stack += child.get("children") or []
    return out


def odd_id_args(first: str | None, second: str | None) -> Iterator[Any]:
    """Arguments an agent or a careless caller gives where a list of ids is expected."""
    yield from ([None], [5], [1.5], [True], None, 5, "", [""], [[]], [{}])
    if first is None:
        return
    yield from (first, [[first]], [first, first], [first.upper()], [f" {first} "], [first, None],
                [first, 7], [{"id": first}], first[: max(1, len(first) // 2)], first[:1])
    if second is not None:
        yield f"{first} {second}"
        yield (first + second)


def odd_relation_args(house: dict[str, Any]) -> Iterator[Any]:
    objs, kids = ids(house, "objects"), child_ids(house)
    a = objs[0] if objs else None
    b = objs[1] if len(objs) > 1 else (kids[0] if kids else None)
    yield from ([[]], [None], [[None]], [5], [[1, 2]], "")
    if a is None:
        return
    yield from (a, [a], [[a]], [[a, UNKNOWN]], [[UNKNOWN, a]], [[a, a]], [[a, None]], [[a, 5]], [a, [a]])
    if b is not None:
        yield from ([a, b], [[a, b, a]], [[a, b], [b, a]], [[a, b], a], [[a], [b]])
    for kid in kids[:2]:
        yield [[a, kid]]


def odd_calls(house: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Calls with odd arguments: non-string ids, bare values, nested lists, child objects."""
    rooms, walls = ids(house, "rooms"), ids(house, "walls")
    doors, windows, objects = ids(house, "doors"), ids(house, "windows"), ids(house, "objects")
    kids = child_ids(house)

    def two(every: list[str]) -> tuple[str | None, str | None]:
        return (every[0] if every else None, every[1] if len(every) > 1 else None)

    for tool in ("get_room_info", "get_wall_list", "get_door_list", "get_window_list", "get_object_list",
                 "get_topdown_room"):
        for args in odd_id_args(*two(rooms)):
            yield tool, args
    for tool, every in (("get_wall_info", walls), ("get_door_info", doors), ("get_window_info", windows),
                        ("get_object_info", objects), ("get_wall_scene", walls),
                        ("get_multiview_rendered_object", objects + doors + windows),
                        ("get_material_image", materials(house))):
        for args in odd_id_args(*two(every)):
            yield tool, args
    for tool in ("get_object_info", "get_multiview_rendered_object"):
        for kid in kids[:3]:
            yield tool, [kid]
        if kids and objects:
            yield tool, [objects[0], kids[0]]
    for args in odd_relation_args(house):
        yield "get_spatial_relation", args


def invoke(functions: Any, tool: str, house: dict[str, Any], args: Any, sys_args: Any) -> dict[str, Any]:
    fn: Callable[..., Any] = getattr(functions, tool)
    scene = copy.deepcopy(house)
    scene["index"] = 0
    if tool in ("get_room_list", "get_topdown_scene"):
        return dict(fn(scene, sys_args))
    return dict(fn(scene, args, sys_args))


def recorded(result: dict[str, Any]) -> dict[str, Any]:
    return {k: ("<image>" if isinstance(k, str) and "output__image" in k else v) for k, v in result.items()}


def record(functions: Any, house_path: Path, house: dict[str, Any], sys_args: Any,
           swatches: list[str], odd: bool = False) -> Iterator[dict[str, Any]]:
    for tool, args in (odd_calls(house) if odd else calls(house, swatches)):
        line: dict[str, Any] = {"house": house_path.relative_to(ROOT).as_posix(), "tool": tool, "args": args}
        try:
            result = invoke(functions, tool, house, args, sys_args)
            line["result"] = json.loads(json.dumps(recorded(result)))
        except Exception as exc:  # the original's failure is the answer being recorded
            message = str(exc).splitlines()[0] if str(exc) else ""
            # the work folder's path is the machine's, not the answer's
            line["exception"] = f"{type(exc).__name__}: {message.replace(sys_args.base_path, 'WORK')}"
        yield line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orig", type=Path, required=True, help="a checkout of gyeomh/LEGO-EVAL")
    ap.add_argument("--work", type=Path, required=True, help="folder prepared by prepare.py")
    ap.add_argument("--materials", type=Path, required=True,
                    help="names of the repository's floor_wall_material_image/*.png, one a line")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--odd", action="store_true",
                    help="odd arguments (non-string ids, bare values, nested lists, child objects) instead")
    ap.add_argument("--houses", type=Path, nargs="*", help="these house files instead of houses.py's list")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from houses import house_paths  # the same list as prepare.py's annotation file

    functions = load_original(args.orig)
    swatches = [n.strip() for n in args.materials.read_text(encoding="utf-8").splitlines() if n.strip()]
    (args.work / "evaluation" / "utils").mkdir(parents=True, exist_ok=True)
    font = args.orig / "evaluation" / "utils" / "roboto.ttf"
    (args.work / "evaluation" / "utils" / "roboto.ttf").write_bytes(font.read_bytes())
    sys_args = types.SimpleNamespace(base_path=str(args.work), data_path=str(args.work / "data"),
                                     material_dir=str(args.work / "materials"),
                                     obj_img_dir=str(args.work / "object_images"))
    count = 0
    with args.out.open("w", encoding="utf-8") as fh:
        for path in [p.resolve() for p in args.houses] if args.houses else house_paths():
            house = json.loads(path.read_text(encoding="utf-8"))
            stage_images(args.work, house, swatches)
            for line in record(functions, path, house, sys_args, swatches, odd=args.odd):
                fh.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")
                count += 1
    print(f"{count} calls written to {args.out}")


if __name__ == "__main__":
    main()
