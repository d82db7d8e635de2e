"""Synthetic rooms at the edges of the mesh checks, for ``run_mesh_oracle.py --odd``.

Our own rooms (nothing copied from the shared data), so the recording carries each room
whole (``"scene"``). Seeded: ``odd_rooms(seed)`` gives the same rooms each time. Each room
stresses one thing the real bedrooms rarely do:

* ``quarter``: objects turned by 90/180/270/360 degrees about y, some a hair off
  (1e-9 rad) and some by the negative quaternion of the same turn;
* ``flush``: objects pushed flat against the walls and each other (gaps of 0, 1 mm, -1 mm);
* ``twins``: an object duplicated in place, and one duplicated 1 cm away;
* ``tiny``: objects of 5 mm to 2 cm beside ordinary ones, one lying on the floor edge;
* ``threshold``: objects crossing a wall by about 0.5 %, 1 % and 2 % of their width;
* ``l_shape``: an L-shaped room with objects in the inner corner and across the notch;
* ``tilted``: objects turned about x or z (a 90 degree roll, a 45 degree pitch);
* ``ceiling``: objects touching and piercing the ceiling, one under the floor.

``odd2_rooms`` (round 2, ``run_mesh_oracle.py --odd2``) goes further:

* ``hair``: objects flush with each other and the walls to within 1e-9 m either way;
* ``depth``: pairs overlapping by the collision threshold (1 cm) exactly and 1e-6 m either side;
* ``signed_zero``: rotations written with ``-0.0`` components, the half turn as ``[0, 1, 0, 0]`` and
  ``[0, -1, 0, 0]``, the identity as ``[0, 0, 0, -1]``;
* ``single``: one object, centred, touching nothing;
* ``crowd``: twelve objects packed in a grid with gaps of 0 and 1e-9 m;
* ``odd_polygon``: the room's corners clockwise, with a repeated corner and a collinear one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

DESCS = ("queen bed with headboard", "wardrobe with two doors", "nightstand with a drawer", "desk", "office chair",
         "floor lamp", "bookshelf", "armchair", "tv stand", "dresser")
Scene = dict[str, Any]


def _yaw(deg: float, off: float = 0.0) -> list[float]:
    half = math.radians(deg) / 2 + off / 2
    return [0.0, math.sin(half), 0.0, math.cos(half)]


def _room(corners: list[tuple[float, float]], height: float = 2.6) -> Scene:
    return {"room_type": "bedroom", "room_id": "odd",
            "bounds_bottom": [[x, 0.0, z] for x, z in corners],
            "bounds_top": [[x, height, z] for x, z in corners], "objects": []}


def _obj(rng: np.random.Generator, pos: list[float], size: list[float], rot: list[float]) -> dict[str, Any]:
    return {"desc": str(rng.choice(DESCS)), "jid": "odd", "pos": [round(v, 6) for v in pos],
            "rot": rot, "size": size}


def _box_room(rng: np.random.Generator) -> tuple[Scene, float, float]:
    hx, hz = float(rng.choice([1.5, 2.0, 2.5])), float(rng.choice([1.8, 2.2]))
    return _room([(-hx, hz), (hx, hz), (hx, -hz), (-hx, -hz)]), hx, hz


def quarter(rng: np.random.Generator) -> Scene:
    room, hx, hz = _box_room(rng)
    for k in range(6):
        deg = float(rng.choice([90, 180, 270, 360, -90]))
        rot = _yaw(deg, float(rng.choice([0.0, 1e-9])))
        if rng.random() < 0.3:
            rot = [-v for v in rot]
        x, z = -hx + 0.6 + (k % 3) * (2 * hx - 1.2) / 2, -hz + 0.7 + (k // 3) * (2 * hz - 1.4)
        room["objects"].append(_obj(rng, [x, 0.0, z], [1.0, 0.8, 0.5], rot))
    return room


def flush(rng: np.random.Generator) -> Scene:
    room, hx, hz = _box_room(rng)
    x = -hx
    for gap in (0.0, 0.001, -0.001, 0.0):
        w = float(rng.choice([0.5, 0.8, 1.0]))
        room["objects"].append(_obj(rng, [x + w / 2, 0.0, -hz + 0.25], [w, 1.0, 0.5], _yaw(0)))
        x += w + gap
    room["objects"].append(_obj(rng, [hx - 0.3, 0.0, 0.0], [1.2, 0.9, 0.6], _yaw(90)))
    return room


def twins(rng: np.random.Generator) -> Scene:
    room, _, _ = _box_room(rng)
    base = _obj(rng, [0.0, 0.0, 0.0], [1.2, 0.7, 0.6], _yaw(float(rng.choice([0, 30, 90]))))
    moved = {**base, "pos": [0.0, 0.0, 0.01]}
    other = _obj(rng, [-0.9, 0.0, -1.0], [0.5, 0.5, 0.5], _yaw(0))
    room["objects"] += [base, dict(base), moved, other, {**other, "pos": [-0.89, 0.0, -1.0]}]
    return room


def tiny(rng: np.random.Generator) -> Scene:
    room, hx, hz = _box_room(rng)
    for size in (0.005, 0.01, 0.02):
        room["objects"].append(_obj(rng, [float(rng.uniform(-1, 1)), 0.0, float(rng.uniform(-1, 1))],
                                    [size, size, size], _yaw(float(rng.choice([0, 45])))))
    room["objects"].append(_obj(rng, [hx - 0.005, 0.0, 0.0], [0.01, 0.01, 0.01], _yaw(0)))
    room["objects"].append(_obj(rng, [0.0, 0.0, 0.0], [1.0, 0.5, 1.0], _yaw(0)))
    return room


def threshold(rng: np.random.Generator) -> Scene:
    room, hx, hz = _box_room(rng)
    for k, share in enumerate((0.005, 0.01, 0.02, 0.0)):
        w = 0.8
        x = hx - w / 2 + share * w
        room["objects"].append(_obj(rng, [x, 0.0, -hz + 0.6 + k * 0.9], [w, 0.8, 0.6], _yaw(0)))
    return room


def l_shape(rng: np.random.Generator) -> Scene:
    room = _room([(0.0, 0.0), (4.0, 0.0), (4.0, 2.0), (2.0, 2.0), (2.0, 4.0), (0.0, 4.0)])
    room["objects"] += [_obj(rng, [1.6, 0.0, 1.6], [0.8, 0.8, 0.8], _yaw(0)),
                        _obj(rng, [2.2, 0.0, 2.2], [0.8, 0.8, 0.8], _yaw(45)),
                        _obj(rng, [3.0, 0.0, 1.0], [1.0, 0.9, 0.6], _yaw(90)),
                        _obj(rng, [1.0, 0.0, 3.0], [0.6, 1.8, 0.5], _yaw(180))]
    return room


def tilted(rng: np.random.Generator) -> Scene:
    room, _, _ = _box_room(rng)
    roll = [math.sin(math.pi / 4), 0.0, 0.0, math.cos(math.pi / 4)]
    pitch = [0.0, 0.0, math.sin(math.pi / 8), math.cos(math.pi / 8)]
    room["objects"] += [_obj(rng, [-0.8, 0.3, 0.0], [1.0, 0.6, 0.4], roll),
                        _obj(rng, [0.8, 0.4, 0.0], [0.8, 0.8, 0.4], pitch),
                        _obj(rng, [0.0, 0.0, 1.0], [0.6, 0.6, 0.6], _yaw(90))]
    return room


def ceiling(rng: np.random.Generator) -> Scene:
    room, _, _ = _box_room(rng)
    room["objects"] += [_obj(rng, [-0.8, 0.0, 0.0], [0.6, 2.6, 0.6], _yaw(0)),
                        _obj(rng, [0.8, 0.0, 0.0], [0.6, 2.7, 0.6], _yaw(0)),
                        _obj(rng, [0.0, -0.2, 1.0], [0.6, 0.5, 0.6], _yaw(0))]
    return room


KINDS = {"quarter": quarter, "flush": flush, "twins": twins, "tiny": tiny, "threshold": threshold,
         "l_shape": l_shape, "tilted": tilted, "ceiling": ceiling}


HAIR = 1e-9


def hair(rng: np.random.Generator) -> Scene:
    room, hx, hz = _box_room(rng)
    x = -hx + float(rng.choice([0.0, HAIR, -HAIR]))
    for gap in (HAIR, -HAIR, 0.0, HAIR):
        room["objects"].append({**_obj(rng, [0.0, 0.0, -hz + 0.3 + HAIR], [0.6, 0.9, 0.6], _yaw(0)), "pos": [
            x + 0.3, 0.0, -hz + 0.3 + float(rng.choice([0.0, HAIR, -HAIR]))]})
        x += 0.6 + gap
    room["objects"].append({**_obj(rng, [0.0, 0.0, 0.0], [0.8, 0.8, 0.8], _yaw(0)), "pos": [hx - 0.4 + HAIR, 0.0, 0.0]})
    return room


def depth(rng: np.random.Generator) -> Scene:
    room, _, hz = _box_room(rng)
    for k, overlap in enumerate((0.01, 0.01 - 1e-6, 0.01 + 1e-6)):
        z = -hz + 0.8 + k * 1.1
        room["objects"].append({**_obj(rng, [0.0, 0.0, 0.0], [0.6, 0.8, 0.6], _yaw(0)), "pos": [-0.3, 0.0, z]})
        room["objects"].append({**_obj(rng, [0.0, 0.0, 0.0], [0.6, 0.8, 0.6], _yaw(0)),
                                "pos": [0.3 - overlap, 0.0, z]})
    return room


def signed_zero(rng: np.random.Generator) -> Scene:
    room, hx, hz = _box_room(rng)
    rotations = [[-0.0, -0.0, -0.0, 1.0], [0.0, 1.0, 0.0, 0.0], [0.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, -1.0],
                 [-0.0, math.sin(math.pi / 4), -0.0, math.cos(math.pi / 4)], [0.0, -0.0, 0.0, -1.0]]
    for k, rot in enumerate(rotations):
        x, z = -hx + 0.7 + (k % 3) * (2 * hx - 1.4) / 2, -hz + 0.7 + (k // 3) * (2 * hz - 1.4)
        room["objects"].append(_obj(rng, [x, 0.0, z], [1.0, 0.8, 0.5], rot))
    return room


def single(rng: np.random.Generator) -> Scene:
    room, _, _ = _box_room(rng)
    room["objects"].append(_obj(rng, [0.0, 0.0, 0.0], [1.0, 0.8, 0.6], _yaw(float(rng.choice([0, 90])))))
    return room


def crowd(rng: np.random.Generator) -> Scene:
    room, hx, hz = _box_room(rng)
    for k in range(12):
        gap = float(rng.choice([0.0, HAIR]))
        x, z = -hx + 0.3 + (k % 4) * (0.6 + gap), -hz + 0.3 + (k // 4) * (0.6 + gap)
        room["objects"].append(_obj(rng, [x, 0.0, z], [0.6, 0.7, 0.6], _yaw(float(rng.choice([0, 90, 180])))))
    return room


def odd_polygon(rng: np.random.Generator) -> Scene:
    room, hx, hz = _box_room(rng)
    corners = [(-hx, -hz), (hx, -hz), (hx, 0.0), (hx, hz), (hx, hz), (-hx, hz)]  # clockwise seen from above
    room = _room(corners)
    room["objects"] += [_obj(rng, [hx - 0.3, 0.0, 0.0], [0.6, 0.8, 0.6], _yaw(0)),
                        _obj(rng, [-hx + 0.25, 0.0, hz - 0.25], [0.5, 0.5, 0.5], _yaw(45)),
                        _obj(rng, [0.0, 0.0, -hz + 0.3 - 0.06], [0.8, 0.8, 0.6], _yaw(0))]
    return room


KINDS2 = {"hair": hair, "depth": depth, "signed_zero": signed_zero, "single": single, "crowd": crowd,
          "odd_polygon": odd_polygon}


def odd2_rooms(seed: int, per_kind: int) -> list[tuple[str, Scene]]:
    """Round 2: ``per_kind`` rooms of each kind of ``KINDS2``, named ``kind-k``."""
    return odd_rooms(seed, per_kind, KINDS2)


def odd_rooms(seed: int, per_kind: int, kinds: dict[str, Any] | None = None) -> list[tuple[str, Scene]]:
    """``per_kind`` rooms of each kind (``KINDS`` unless ``kinds``), named ``kind-k``."""
    out = []
    for name, make in (KINDS if kinds is None else kinds).items():
        for k in range(per_kind):
            room = make(np.random.default_rng([seed, k, len(name)]))
            room["room_id"] = f"{name}-{k}"
            out.append((f"{name}-{k}", room))
    return out
