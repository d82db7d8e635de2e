"""Open physics for BuildArena machines on MuJoCo (replaces Besiege, spec 6).

``profile`` reads the physics profile (``profiles/besiege-1.toml``: every constant with its
unit and source), ``config`` the settings taken from it, ``divergence`` the tests that tell
a blow-up from physics, ``scene`` the world around the
machine, ``placement`` where the evaluator puts it, ``layout`` the placed
machine and its welds, ``groups`` the rigid groups (blocks joined by intact
welds), ``mjcf`` the model's MJCF text, ``build`` the compiled model of the
groups, ``stress`` the weld forces inside the groups, ``sim`` the pieces of a control tick
(breaking welds and regrouping), ``simulation`` the steppable run (``Simulation``: reset, step
N ticks, read the state) and ``trajectory`` the 25 Hz log.
"""

from .config import DEFAULT_CONFIG, PhysicsConfig
from .placement import Placement, on_ground, over_gap
from .scene import Cargo, FireAll, Scene, StaticBox
from .sim import BrokenWeld, RunOutput
from .simulation import SimState, Simulation, run_scene
from .trajectory import Trajectory

__all__ = [
    "DEFAULT_CONFIG",
    "BrokenWeld",
    "Cargo",
    "FireAll",
    "PhysicsConfig",
    "Placement",
    "RunOutput",
    "Scene",
    "SimState",
    "Simulation",
    "StaticBox",
    "Trajectory",
    "on_ground",
    "over_gap",
    "run_scene",
]
