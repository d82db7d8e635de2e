"""Diagnostic reasoning for each turn, from our own templates (in place of the GPT-written
chain of thought of §3.4; this text is deterministic and labelled as template-made).

The reasoning is grounded twice: the *bugs* come from :func:`.diagnose.diagnose` on the
scene the turn starts from, sorted into the §3.4 taxonomy (physical: overlap, out of
bounds, floating; layout rationality: missing essentials, askew orientation, core
furniture still to place; spatial distribution: crowding, empty quarters), and each
recorded call gets a justification naming the object, its numbers and the bug it fixes.
One of five templates is drawn with equal weights, as the original does: A four-step
method, B strategy first, C questions and answers, D free prose, E step-by-step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .assets import ROOM_TEMPLATES, category_of, normalize_room_type
from .diagnose import Diagnosis, diagnose
from .flat import Obj, Scene, quat_yaw_deg, room_polygon_xz, volume_m3

TEMPLATES = ("A", "B", "C", "D", "E")


def _name(o: Obj) -> str:
    return f"the {category_of(o['desc'])} ({o['id']})"


def _facing(rot: list[float]) -> str:
    yaw = quat_yaw_deg(rot)
    return ("north (+z)", "east (+x)", "south (−z)", "west (−x)")[int(((yaw + 45.0) % 360.0) // 90.0)]


def _wall_phrase(scene: Scene, x: float, z: float) -> str:
    poly = room_polygon_xz(scene)
    xs, zs = [p[0] for p in poly], [p[1] for p in poly]
    gaps = {"west": x - min(xs), "east": max(xs) - x, "south": z - min(zs), "north": max(zs) - z}
    side = min(gaps, key=lambda k: gaps[k])
    return f"near the {side} wall" if gaps[side] < 0.9 else "in the open floor"


def bug_lines(scene: Scene, d: Diagnosis) -> dict[str, list[str]]:
    """The scene's problems in the three §3.4 families, as short sentences."""
    by_id = {o["id"]: o for o in scene["objects"]}
    phys = [f"{_name(by_id[a])} and {_name(by_id[b])} overlap by {depth * 100:.0f} cm"
            for a, b, depth in d.collisions[:3]]
    phys += [f"{_name(by_id[i])} has {share * 100:.0f}% of its footprint outside the walls"
             for i, share in d.outside[:3]]
    phys += [f"{_name(by_id[i])} pokes through the floor or the ceiling" for i in d.through[:2]]
    phys += [f"{_name(by_id[i])} floats above the floor with nothing under it" for i in d.floating[:2]]
    room = normalize_room_type(scene.get("room_type", ""))
    layout = [f"the {room} still has no {m}" for m in d.missing]
    layout += [f"{_name(by_id[i])} sits askew at {quat_yaw_deg(by_id[i]['rot']):.0f}°" for i in d.askew[:2]]
    if not scene["objects"]:
        layout.append(f"the {room} is empty: the large pieces that define the layout come first")
    dist = []
    if d.crowded:
        dist.append("furniture covers most of the floor, leaving little room to walk")
    if scene["objects"] and d.empty_share >= 0.5:
        dist.append(f"{d.empty_share * 100:.0f}% of the room's quarters are still empty, so the layout is lopsided")
    return {"physical": phys, "layout": layout, "distribution": dist}


def _fmt(v: list[float]) -> str:
    return "(" + ", ".join(f"{x:.2f}" for x in v) + ")"


def justify(scene: Scene, d: Diagnosis, call: dict[str, Any]) -> str:
    """One sentence saying what a call does and which problem it answers."""
    a = call["arguments"]
    name = call["name"]
    room = normalize_room_type(scene.get("room_type", ""))
    if name == "add_object":
        cat = category_of(a["object_description"])
        vol = volume_m3({"size": a["size"]})
        why = (f"a {room} needs a {cat}" if cat in d.missing or any(cat in m for m in d.missing)
               else "core furniture goes in first" if vol >= 2.0
               else "a mid-sized piece that completes the functional zone" if vol >= 0.5
               else "a finishing touch once the big pieces stand")
        pos = a["position"]
        return (f"add_object '{a['object_description'][:60]}': {why}; bottom centre {_fmt(pos)}, "
                f"{_wall_phrase(scene, pos[0], pos[2])}, facing {_facing(a['rotation'])}, "
                f"size {a['size'][0]:.2f} × {a['size'][1]:.2f} × {a['size'][2]:.2f} m.")
    handle = a.get("jid", a.get("jid_to_replace"))
    o = next((x for x in scene["objects"] if x["id"] == handle), None)
    if o is None:
        return f"{name} on {handle}."
    hits = [c for c in d.collisions if handle in c[:2]]
    out = next((s for i, s in d.outside if i == handle), None)
    problem = (f"it overlaps by {hits[0][2] * 100:.0f} cm" if hits
               else f"{out * 100:.0f}% of it is outside the room" if out
               else "")
    if name == "remove_object":
        cat = category_of(o["desc"])
        belongs = any(cat == c for group in ROOM_TEMPLATES.get(room, ((), ())) for c in group)
        why = problem or ("it does not belong in a " + room if not belongs else "it duplicates what the room has")
        return f"remove_object {_name(o)}: {why}."
    if name == "move_object":
        new = a["new_position"]
        dx, dz = new[0] - o["pos"][0], new[2] - o["pos"][2]
        why = problem or ("it blocks the walkway" if math.hypot(dx, dz) > 0.3 else "it is slightly off its spot")
        return (f"move_object {_name(o)} from {_fmt(o['pos'])} to {_fmt(new)} (Δx {dx:+.2f} m, Δz {dz:+.2f} m): "
                f"{why}; the new spot is {_wall_phrase(scene, new[0], new[2])}.")
    if name == "rotate_object":
        cur, new = quat_yaw_deg(o["rot"]), quat_yaw_deg(a["new_rotation"])
        return (f"rotate_object {_name(o)} from {cur:.0f}° to {new:.0f}°: "
                f"{problem or 'its front should face ' + _facing(a['new_rotation'])}, square to the walls.")
    if name == "scale_object":
        new = a["new_size"]
        ratio = volume_m3({"size": new}) / max(volume_m3(o), 1e-9)
        word = "too small" if ratio > 1 else "too large"
        return (f"scale_object {_name(o)} to {new[0]:.2f} × {new[1]:.2f} × {new[2]:.2f} m: "
                f"{problem or 'it is ' + word + ' for its role'} (volume × {ratio:.2f}).")
    return (f"replace_object {_name(o)}: '{o['desc'][:50]}' does not fit the request; "
            f"use '{a['new_object_description'][:60]}' in the same place.")


def _count_change(before: Diagnosis, after: Diagnosis) -> str:
    parts = [f"overlapping pairs {len(before.collisions)} → {len(after.collisions)}",
             f"objects outside {len(before.outside)} → {len(after.outside)}",
             f"missing essentials {len(before.missing)} → {len(after.missing)}"]
    return "; ".join(parts)


def _bullets(lines: list[str]) -> str:
    return "\n".join(f"- {x}" for x in lines) if lines else "- none"


def turn_reasoning(
    instruction: str,
    before: Scene,
    calls: list[dict[str, Any]],
    after: Scene,
    rng: np.random.Generator,
    diagnoses: tuple[Diagnosis, Diagnosis] | None = None,
) -> str:
    """The ``<think>`` text of one turn (template drawn from ``rng``); ``diagnoses`` of
    ``before`` and ``after`` may be passed when already known."""
    d_before, d_after = diagnoses or (diagnose(before), diagnose(after))
    bugs = bug_lines(before, d_before)
    steps = [justify(before, d_before, c) for c in calls]
    names = sorted({c["name"] for c in calls})
    strategy = f"use {', '.join(names)} ({len(calls)} call{'s' if len(calls) > 1 else ''})"
    impact = _count_change(d_before, d_after)
    found = bugs["physical"] + bugs["layout"] + bugs["distribution"]
    template = TEMPLATES[int(rng.integers(len(TEMPLATES)))]
    if template == "A":
        return (f"1. Problem identification.\nPhysical:\n{_bullets(bugs['physical'])}\n"
                f"Layout rationality:\n{_bullets(bugs['layout'])}\nSpatial distribution:\n"
                f"{_bullets(bugs['distribution'])}\n2. Strategy and tools: {strategy}.\n"
                f"3. Parameters:\n{_bullets(steps)}\n4. Expected effect: {impact}.")
    if template == "B":
        return (f"Strategy: {strategy}, aiming at the request \"{instruction[:120]}\".\n"
                f"Why: {'; '.join(found[:4]) or 'the room needs its next layer of furniture'}.\n"
                f"Details:\n{_bullets(steps)}\nAfter this turn: {impact}.")
    if template == "C":
        return (f"Q: What is wrong with the scene right now?\nA: {'; '.join(found[:5]) or 'nothing serious'}.\n"
                f"Q: What should this turn change?\nA: I will {strategy}.\n"
                f"Q: With which values?\nA:\n{_bullets(steps)}\nQ: Does that help?\nA: {impact}.")
    if template == "D":
        lead = ("Looking at the top view and the scene JSON, " + "; ".join(found[:3]) + ". "
                if found else "The top view shows no conflicts, so the layout can grow. ")
        return lead + " ".join(steps) + f" Net effect: {impact}."
    return ("Let me go step by step. First, the problems: "
            f"{'; '.join(found[:4]) or 'none that block progress'}. Next, the edits: "
            + " ".join(steps) + f" Finally, the check: {impact}.")


def final_reasoning(scene: Scene, d: Diagnosis | None = None) -> str:
    """The ``<think>`` text of the closing ``terminate`` turn."""
    d = d or diagnose(scene)
    room = normalize_room_type(scene.get("room_type", ""))
    notes = [f"{len(scene['objects'])} objects are placed"]
    notes.append("every essential of a " + room + " is present" if not d.missing
                 else "still without " + ", ".join(d.missing) + ", which the request does not ask for")
    notes.append("no overlaps deeper than 1 cm" if not d.collisions
                 else f"{len(d.collisions)} slight overlap(s) remain between pieces that touch")
    return "The scene matches the request: " + "; ".join(notes) + ". No further edit improves it, so I stop."
