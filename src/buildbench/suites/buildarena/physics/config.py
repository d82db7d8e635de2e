"""Every number of the open BuildArena physics in one published dataclass.

Besiege (Unity PhysX, closed source) publishes none of its joint strengths,
friction or solver settings (spec 6.1, 9). The values below are either
given by the benchmark (cited) or chosen by us for the reason stated, and
every simulation result records the config it ran with. Change a value
only by making a new config; results under different configs are not
comparable.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class PhysicsConfig:
    """Solver settings, break thresholds and actuator constants (SI-like: units = metres, mass units = kg).

    Attributes:
        timestep_s: Fixed step. Besiege's fixed update is 100 Hz (spec 1.4);
            we step at 200 Hz because MuJoCo's stiffest stable weld time
            constant is 2 steps, and a 10 ms weld constant keeps a 20-block
            bridge's sag in centimetres while staying ≥ 20× real time
            (measured: bridges stable up to 8 ms, ``notes/physics-mujoco.md``).
        gravity_mps2: Downward gravity; "normal gravity" of the block
            descriptions (App. E.2), taken as Earth's.
        integrator: MuJoCo integrator name; ``implicitfast`` treats the
            wheel servos' velocity gains implicitly, so stiff motors stay stable.
        iterations: Newton solver iterations per step (MuJoCo default 100;
            the solver converges in far fewer for these scenes, the cap
            only bounds the worst case).
        weld_timeconst_s: Weld ``solref`` time constant: 2·timestep, the
            stiffest MuJoCo accepts (it clamps below), so attached blocks
            behave as rigidly as the step allows.
        weld_dampratio: Weld ``solref`` damping ratio (critical).
        weld_break_force_n: A weld breaks when the magnitude of its
            constraint force exceeds this (N). Our choice: about the
            weight of 1000 mass units, so shear never breaks a beam before
            bending does, as in Besiege, where bridges mostly fail by
            snapping near mid-span.
        weld_break_torque_nm: A weld breaks when its constraint torque
            exceeds this (N·m). Our choice, calibrated so that a plain
            wooden beam over the 5-unit gap (span 7) holds about 230 mass
            units at mid-span (P = 4·T/L/g), the magnitude of the paper's
            Support Lv.1 loads (Table 2: 100–600), while a plain beam over
            the 20-unit gap holds only ~75 and needs bracing.
        brace_break_force_n: Break force of a Brace weld (N); Besiege braces
            are known to be stronger than block joints, we use twice.
        brace_break_torque_nm: Break torque of a Brace weld (N·m), twice.
        winch_stiffness_timeconst_s: ``solref`` time constant of the rope
            length limit (a Winch rope cannot stretch beyond its length).
        wheel_rpm: Powered Wheel motor speed, 100 rpm (App. E.2).
        wheel_gain_nms: Velocity-servo gain of a wheel motor (N·m·s/rad):
            a wheel (mass 1, radius 1) reaches speed in ~5 steps.
        wheel_max_torque_nm: Motor torque limit (N·m) while driving and
            braking (auto-brake: the servo holds speed 0 on release);
            enough to carry 50 mass units of cargo up to speed in a second.
        wheel_hub_mass_fraction: Share of a wheel's mass given to its hub,
            the massless-in-spirit body that is welded to the base so the
            wheel's attachment can break while the disc spins on a hinge.
        friction: Sliding friction coefficient of every contact (Unity
            PhysX's default material is 0.6 dynamic; wheels need grip, so 1.0).
        cannon_recoil_mass_units: Cannon recoil = weight of this many mass
            units (App. E.2).
        steam_factor: Recoil multiplier while heated (App. E.2).
        torch_heat_radius: Radius of a torch's heating sphere (App. E.2).
        log_hz: Trajectory sampling rate (Lua script, spec 1.4).
    """

    timestep_s: float = 0.005
    gravity_mps2: float = 9.81
    integrator: str = "implicitfast"
    iterations: int = 50
    weld_timeconst_s: float = 0.01
    weld_dampratio: float = 1.0
    weld_break_force_n: float = 10_000.0
    weld_break_torque_nm: float = 4_000.0
    brace_break_force_n: float = 20_000.0
    brace_break_torque_nm: float = 8_000.0
    winch_stiffness_timeconst_s: float = 0.02
    wheel_rpm: float = 100.0
    wheel_gain_nms: float = 100.0
    wheel_max_torque_nm: float = 150.0
    wheel_hub_mass_fraction: float = 0.05
    friction: float = 1.0
    cannon_recoil_mass_units: float = 1.6
    steam_factor: float = 8.6
    torch_heat_radius: float = 0.3
    log_hz: float = 25.0

    def __post_init__(self) -> None:
        if self.weld_timeconst_s < 2 * self.timestep_s:
            raise ValueError(
                f"weld_timeconst_s={self.weld_timeconst_s} is below 2*timestep_s; MuJoCo would clamp it"
            )
        steps = 1.0 / (self.log_hz * self.timestep_s)
        if abs(steps - round(steps)) > 1e-9:
            raise ValueError(f"1/log_hz must be a whole number of steps (timestep {self.timestep_s})")

    @property
    def steps_per_log(self) -> int:
        """Physics steps between two trajectory samples."""
        return round(1.0 / (self.log_hz * self.timestep_s))

    def to_json(self) -> dict[str, Any]:
        """The config as a JSON-ready dict (recorded with every result)."""
        return asdict(self)


DEFAULT_CONFIG = PhysicsConfig()
"""The config every published BuildArena result of ours uses."""
