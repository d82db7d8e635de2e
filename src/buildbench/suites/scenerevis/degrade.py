"""The ``degraded`` calibration agent: the oracle's recorded chain replayed, then a fraction of the
final scene's objects moved (towards the room's middle), turned or scaled (``-o degrade=FRACTION``, seeded by the episode
seed; see :mod:`buildbench.harness.degrade`).

It edits through the text protocol like any agent: where the oracle's last reply is
``terminate``, it sends ``move_object`` / ``rotate_object`` / ``scale_object`` calls on the scene
the env shows it, then ``terminate`` in the same reply, so it needs no more turns than the oracle.
Calls name objects as the run's ``address`` does (:func:`.agents.scripted.call_names`); under
``address=jid`` only objects that a jid names alone can be corrupted, and the fraction is of those.
"""

from __future__ import annotations

import math
from typing import Any

from buildbench.harness import Action, Agent, EpisodeContext, Observation, Task
from buildbench.harness.degrade import Corruption

from .agents.scripted import OracleAgent, _terminate, call_names, turn_reply
from .options import SceneReVisOptions

#: How far a moved object goes towards the objects' mean position (the middle of the furnished
#: room), as a share of the way: it lands on what stands there (a collision) and stays inside.
#: A move in a random direction would often leave the room, and an object outside collides with
#: nothing, so the collision rate would fall again as the fraction grows.
MOVE_SHARE = (0.7, 1.0)
#: A turned object's yaw change, degrees (never a half turn, which leaves a box's footprint).
TURN_DEG = (45.0, 135.0)
#: A scaled object's size factor.
SCALE = (1.5, 2.5)


def _lerp(bounds: tuple[float, float], u: float) -> float:
    return bounds[0] + (bounds[1] - bounds[0]) * u


def _yawed(rot: list[float], deg: float) -> list[float]:
    """The quaternion ``[x, y, z, w]`` turned by ``deg`` about the vertical (y) axis."""
    half = math.radians(deg) / 2.0
    s, c = math.sin(half), math.cos(half)
    x, y, z, w = (float(v) for v in rot)
    return [round(v, 6) for v in (c * x + s * z, c * y + s * w, c * z - s * x, c * w - s * y)]


def corrupt_calls(objects: list[dict[str, Any]], fraction: float, seed: int) -> list[dict[str, Any]]:
    """Edit calls that move, turn or scale ``fraction`` of the ``objects`` a call can name (a
    third each, by draw); the room's middle is that of all of them."""
    names = call_names({"objects": objects})
    named = [(obj, name) for obj, name in zip(objects, names, strict=True) if name is not None]
    c = Corruption(len(named), fraction, seed, draws=3)
    middle = [sum(float(o["pos"][k]) for o in objects) / max(len(objects), 1) for k in (0, 2)]
    calls = []
    for i in c.indices:
        (obj, name), (u_kind, u_dir, u_size) = named[i], c.u[i]
        key = "id" if obj.get("id") else "jid"  # address=jid reads the released key only
        kind = min(int(u_kind * 3), 2)
        if kind == 0:
            share = _lerp(MOVE_SHARE, u_size)
            x, y, z = (float(v) for v in obj["pos"])
            calls.append({"name": "move_object", "arguments": {
                key: name, "new_position": [round(x + share * (middle[0] - x), 4), y,
                                            round(z + share * (middle[1] - z), 4)]}})
        elif kind == 1:
            deg = _lerp(TURN_DEG, u_size) * (1 if u_dir < 0.5 else -1)
            calls.append({"name": "rotate_object", "arguments": {key: name,
                                                                 "new_rotation": _yawed(obj["rot"], deg)}})
        else:
            factor = _lerp(SCALE, u_size)
            calls.append({"name": "scale_object", "arguments": {
                key: name, "new_size": [round(float(v) * factor, 4) for v in obj["size"]]}})
    return calls


class DegradedAgent(OracleAgent):
    """The oracle, whose closing ``terminate`` reply first corrupts the scene it finished."""

    name = "degraded"

    def __init__(self, task: Task, fraction: float) -> None:
        super().__init__(task)
        self.fraction = fraction

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        scene = observation.state.get("scene")
        if scene is None or self._next < len(self.turns):
            return await super().act(observation, ctx)
        calls = corrupt_calls(list(scene.get("objects") or []), self.fraction, int(ctx.seed))
        return Action(text=turn_reply(f"Degrading {len(calls)} object(s) of the recorded scene.",
                                      [*calls, _terminate("The current scene layout is already optimal.")]))


def degraded(task: Task, model: Any, options: SceneReVisOptions) -> Agent:
    return DegradedAgent(task, options.degrade)
