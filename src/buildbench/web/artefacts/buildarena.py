"""BuildArena: the scored machine, simulated again and played back."""

from __future__ import annotations

import re

import numpy as np

from buildbench.harness.episode import Episode
from buildbench.harness.episode_outcome import episode_outcome

from . import Artefact, ArtefactContext, no_outcome

#: Animation frames kept at most (the 25 Hz log is thinned evenly beyond this).
MAX_FRAMES = 400
_WELD = re.compile(r"^([A-Za-z0-9_]+)->([A-Za-z0-9_]+)\.")


def machine_artefact(episode: Episode, context: ArtefactContext) -> Artefact:
    """Blocks as boxes (real frame, z up) moving along the simulated trajectory.

    The machine is rebuilt from the outcome's call history and simulated exactly as the
    scorer does (``check.simulate``, deterministic). The log holds block centres only, so
    each block keeps its build orientation while it moves; blocks the log leaves out
    (connectors) stay where the placement put them. Blocks at a joint that broke are red.
    """
    from buildbench.suites.buildarena.check import simulate
    from buildbench.suites.buildarena.env import rebuild_outcome
    from buildbench.suites.buildarena.library.bodies import body_graph
    from buildbench.suites.buildarena.library.geometry import body_shape_real
    from buildbench.suites.buildarena.outcome import BuildArenaOutcome
    from buildbench.suites.buildarena.physics import DEFAULT_CONFIG, PhysicsConfig
    from buildbench.suites.buildarena.tasks import get_task, scene_for

    art = Artefact("machine", up="z")
    outcome = episode_outcome(episode, BuildArenaOutcome)
    if outcome is None:
        return no_outcome(art, episode)
    machine = rebuild_outcome(outcome)
    if machine is None or not machine.blocks:
        art.notes.append("the episode produced no machine")
        return art
    task_id = outcome.task_id or episode.task_id
    duration = outcome.sim_duration_s
    physics = outcome.physics
    config = DEFAULT_CONFIG if not physics else PhysicsConfig.from_record(physics)  # the profile it was scored under
    result = simulate(machine, task_id, seed=outcome.seed, duration_s=duration, config=config)
    art.notes.append(f"physics profile {config.profile_name} ({config.sha256[:12]}), status {result.status}")
    scene = scene_for(get_task(task_id), machine, duration, body_graph(machine))
    broken = {m.group(i) for text in result.broken for m in [_WELD.match(text)] if m for i in (1, 2)}
    place_rot, place_off = np.asarray(scene.placement_rotation), np.asarray(scene.placement_offset)
    traj = result.trajectory
    frames = np.unique(np.linspace(0, len(traj.time) - 1, min(MAX_FRAMES, len(traj.time))).astype(int))
    tracks: dict[str, list[float]] = {}
    for block in machine.blocks.values():
        shape = body_shape_real(block)
        size = shape.size if shape.kind == "box" else (2 * shape.size[0], 2 * shape.size[0], shape.size[2])
        status = "broken" if block.id in broken else "block"
        art.box(block.id, f"{block.id}: {block.type}", place_rot @ shape.center + place_off, size,
                place_rot @ shape.rotation, status)
        if block.id in traj.ids:
            path = traj.position[frames, traj.ids.index(block.id), :]
            tracks[block.id] = [round(float(v), 4) for v in path.reshape(-1)]
    for k, box in enumerate(scene.terrain):
        art.box(f"terrain-{k}", "terrain", box.center, box.size, None, "terrain")
    if scene.cargo is not None:
        art.box("Ballast", "cargo (ballast)", scene.cargo.center, scene.cargo.size, None, "cargo")
        if "Ballast" in traj.ids:
            path = traj.position[frames, traj.ids.index("Ballast"), :]
            tracks["Ballast"] = [round(float(v), 4) for v in path.reshape(-1)]
    if len(frames) > 1:
        art.animation = {"times": [round(float(traj.time[i]), 3) for i in frames], "tracks": tracks}
    verdict = "passed" if result.passed else "failed"
    art.summary = (f"{task_id}: {verdict}: {result.reason}; indicator {result.indicator:.3f}; "
                   f"{machine.num_blocks} parts; {len(result.broken)} joint(s) broke")
    art.finding("ok" if result.passed else "fail", f"simulation {verdict}", result.reason)
    if result.broken:
        art.finding("broken", f"{len(result.broken)} joint(s) broke", "\n".join(result.broken[:40]), sorted(broken))
    art.notes += ["machine rebuilt from the stored call history and simulated again (deterministic)",
                  "the trajectory log holds block centres only: blocks keep their build orientation",
                  "cylinders (wheels) are drawn as their bounding boxes"]
    return art
