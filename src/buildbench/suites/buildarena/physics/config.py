"""The simulation's settings, read from a physics profile (``profile``; ``profiles/besiege-1.toml``).

Besiege (Unity PhysX, closed source) publishes none of its joint strengths, friction, drag or
solver settings (spec 6.1, 9). Every value, its unit and its source (a Besiege or paper value,
the spec's required behaviour, or our assumption with the reason) lives in the profile file;
this module only names them and checks that they fit together. Results under different
profiles are not comparable: every result records the profile's name and hash.

Choices that change only the rounding of the solver's sums, not the model
(the order in which bodies are added, how a rigid group's bodies are
nested), are not settings: the reference indicators did not move under them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass
from typing import Any

from .profile import DEFAULT_PROFILE, Entry, PhysicsProfile, ProfileError, load_profile, values_sha256


@dataclass(frozen=True)
class PhysicsConfig:
    """Solver settings, break thresholds, drag and actuator constants (units = metres, mass units = kg).

    Each field is the profile value of the same name; the profile file gives its unit, source and
    reason. Build one with :meth:`from_profile` (``DEFAULT_CONFIG`` is the default profile's);
    ``dataclasses.replace`` derives a variant whose :attr:`sha256` differs.

    Attributes:
        timestep_s: Physics step.
        gravity_mps2: Downward gravity.
        integrator: MuJoCo integrator name.
        iterations: Solver iteration cap per step.
        weld_rotational_stiffness_m2: A weld's rotational stiffness per unit of its translational
            stiffness; only loops of welds (braces) read it.
        weld_break_force_n / weld_break_torque_nm: A block weld breaks when its (lagged) force or
            torque about its anchor exceeds these.
        brace_stiffness_fraction: A Brace's stiffness as a fraction of a block weld's.
        weld_response_s: Time constant of the welds' response to load (``welds._WeldResponse``).
        brace_break_force_n / brace_break_torque_nm: A Brace weld's thresholds.
        winch_stiffness_timeconst_s: ``solref`` time constant of a rope's length limit.
        wheel_rpm: Powered Wheel motor speed.
        wheel_gain_nms / wheel_max_torque_nm: Wheel velocity-servo gain and torque limit.
        wheel_hub_mass_fraction: Share of a wheel's mass on its welded hub.
        friction: Sliding friction of every contact.
        contact_timeconst_s / contact_solimp: Contact ``solref`` time constant and impedance.
        collision_gap_m: Colliders are this much smaller than their blocks.
        cannon_recoil_mass_units / steam_factor: Cannon recoil and its multiplier while heated.
        torch_heat_radius: Radius of a torch's heating sphere.
        cargo_inertial_mass_cap: The cargo's body mass follows its ramp up to this (``sim._Cargo``).
        linear_drag_per_s / quadratic_drag_per_m / angular_drag_per_s: Drag of every rigid body, as
            decelerations per unit of mass (``build.drag_of``).
        max_speed_mps: Any generalized velocity above this means the solver diverged.
        energy_jump_j_per_kg: Most kinetic energy per unit of mass that a check interval may add.
        max_penetration_m: Deepest contact (or rope stretch) that is not a divergence.
        divergence_check_ticks: Control ticks between two energy checks.
        divergence_retries: Re-simulations with a finer step before a run counts as diverged.
        retry_step_divisor: Each retry divides the step (and multiplies the iterations) by this.
        control_hz: Rate of the control loop (keys, cargo mass, heating, thrust, weld breaks).
        log_hz: Trajectory sampling rate.
        profile_name: The profile these values came from (a ``replace`` keeps the name, not the hash).
    """

    timestep_s: float
    gravity_mps2: float
    integrator: str
    iterations: int
    weld_rotational_stiffness_m2: float
    weld_break_force_n: float
    weld_break_torque_nm: float
    brace_stiffness_fraction: float
    weld_response_s: float
    brace_break_force_n: float
    brace_break_torque_nm: float
    winch_stiffness_timeconst_s: float
    wheel_rpm: float
    wheel_gain_nms: float
    wheel_max_torque_nm: float
    wheel_hub_mass_fraction: float
    friction: float
    contact_timeconst_s: float
    contact_solimp: tuple[float, float, float]
    collision_gap_m: float
    cannon_recoil_mass_units: float
    steam_factor: float
    torch_heat_radius: float
    cargo_inertial_mass_cap: float
    linear_drag_per_s: float
    quadratic_drag_per_m: float
    angular_drag_per_s: float
    max_speed_mps: float
    energy_jump_j_per_kg: float
    max_penetration_m: float
    divergence_check_ticks: int
    divergence_retries: int
    retry_step_divisor: int
    control_hz: float
    log_hz: float
    profile_name: str = DEFAULT_PROFILE

    def __post_init__(self) -> None:
        def need(ok: bool, name: str, what: str) -> None:
            if not ok:
                raise ValueError(f"field 'values.{name}' = {getattr(self, name)!r}: {what}")

        need(self.timestep_s > 0, "timestep_s", "must be positive")
        need(self.contact_timeconst_s >= 2 * self.timestep_s, "contact_timeconst_s",
             "is below 2*timestep_s; MuJoCo would clamp it")
        need(self.weld_response_s >= 0, "weld_response_s", "must be >= 0")
        need(self.weld_rotational_stiffness_m2 > 0, "weld_rotational_stiffness_m2", "must be positive")
        need(self.brace_stiffness_fraction > 0, "brace_stiffness_fraction", "must be positive")
        for name in ("linear_drag_per_s", "angular_drag_per_s"):
            need(0 <= getattr(self, name) * self.timestep_s < 1, name, "must be >= 0 and below 1/timestep_s")
        # Explicit drag is stable while k·|v|·dt stays well below 1 at any speed below the divergence bound.
        need(0 <= self.quadratic_drag_per_m * self.max_speed_mps * self.timestep_s < 1, "quadratic_drag_per_m",
             "must be >= 0 and below 1/(max_speed_mps*timestep_s)")
        need(self.max_speed_mps > 0, "max_speed_mps", "must be positive")
        need(self.energy_jump_j_per_kg > 0, "energy_jump_j_per_kg", "must be positive")
        need(self.max_penetration_m > 0, "max_penetration_m", "must be positive")
        need(self.divergence_check_ticks >= 1, "divergence_check_ticks", "must be >= 1")
        need(self.retry_step_divisor >= 2, "retry_step_divisor", "must be >= 2")
        need(self.integrator in ("Euler", "RK4", "implicit", "implicitfast"), "integrator",
             "must be a MuJoCo integrator (Euler, RK4, implicit, implicitfast)")
        for name, ratio in (
            ("control_hz", 1.0 / (self.control_hz * self.timestep_s)),
            ("log_hz", self.control_hz / self.log_hz),
        ):
            need(ratio >= 1 and abs(ratio - round(ratio)) <= 1e-9, name,
                 "must divide the faster rate into whole steps")

    @property
    def steps_per_tick(self) -> int:
        """Physics steps per control tick."""
        return round(1.0 / (self.control_hz * self.timestep_s))

    @property
    def ticks_per_log(self) -> int:
        """Control ticks between two trajectory samples."""
        return round(self.control_hz / self.log_hz)

    def values(self) -> dict[str, Any]:
        """The physical values (every field but the profile's name)."""
        out = asdict(self)
        out.pop("profile_name")
        out["contact_solimp"] = tuple(out["contact_solimp"])
        return out

    @property
    def sha256(self) -> str:
        """Hash of the values, equal to the profile's when none was replaced."""
        return values_sha256(self.values())

    def to_json(self) -> dict[str, Any]:
        """The config as a JSON-ready dict (recorded with every result)."""
        return asdict(self)

    def stamp(self) -> dict[str, str]:
        """``{"name", "sha256"}``: what every result records of the physics it ran with."""
        return {"name": self.profile_name, "sha256": self.sha256}

    def record(self) -> dict[str, Any]:
        """What an episode stores of its physics: name, hash and every value (rescoring needs no file)."""
        values = {k: list(v) if isinstance(v, tuple) else v for k, v in self.values().items()}
        return {**self.stamp(), "values": values}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> PhysicsConfig:
        """The config a :meth:`record` describes.

        Raises:
            ProfileError: A malformed record, or values whose hash is not the recorded one.
        """
        name, values = record.get("name"), record.get("values")
        if not isinstance(name, str) or not isinstance(values, dict):
            raise ProfileError("recorded physics: expected name and values")
        entries = {k: Entry(tuple(float(x) for x in v) if isinstance(v, list) else v, "-", "assumed", "recorded")
                   for k, v in values.items()}
        config = cls.from_profile(PhysicsProfile(name, 0, entries, origin=f"recorded {name}"))
        if record.get("sha256") not in (None, config.sha256):
            raise ProfileError(f"recorded physics {name}: the values do not match the recorded hash")
        return config

    def refined(self, level: int) -> PhysicsConfig:
        """The config of the ``level``-th divergence retry: the step divided and the iterations
        multiplied by ``retry_step_divisor`` that many times (control and log rates unchanged)."""
        if level == 0:
            return self
        k = self.retry_step_divisor**level
        return dataclasses.replace(self, timestep_s=self.timestep_s / k, iterations=self.iterations * k)

    @classmethod
    def from_profile(cls, profile: PhysicsProfile) -> PhysicsConfig:
        """The settings of ``profile``.

        Raises:
            ProfileError: A missing or unknown field, a value of the wrong kind, or values that do not fit
                together (one line naming the profile and the field).
        """
        where = f"physics profile {profile.origin or profile.name}"
        names = [f.name for f in dataclasses.fields(cls) if f.name != "profile_name"]
        missing = [n for n in names if n not in profile.entries]
        if missing:
            raise ProfileError(f"{where}: field 'values.{missing[0]}' is missing")
        unknown = sorted(set(profile.entries) - set(names))
        if unknown:
            raise ProfileError(f"{where}: field 'values.{unknown[0]}' is not a setting of this simulation")
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name == "profile_name":
                continue
            kwargs[f.name] = _typed(where, f.name, str(f.type), profile.entries[f.name].value)
        try:
            return cls(**kwargs, profile_name=profile.name)
        except ValueError as exc:
            raise ProfileError(f"{where}: {exc}") from None


def _typed(where: str, name: str, kind: str, value: Any) -> Any:
    """``value`` as the field's type (an int where a float is wanted is fine; nothing else converts)."""
    bad = ProfileError(f"{where}: field 'values.{name}' must be {kind.replace('tuple[float, float, float]', 'three numbers')}")
    if kind == "str":
        if not isinstance(value, str):
            raise bad
        return value
    if kind == "int":
        if not isinstance(value, int) or value < 0:
            raise bad
        return value
    if kind == "float":
        if isinstance(value, (str, tuple)):
            raise bad
        return float(value)
    if not (isinstance(value, tuple) and len(value) == 3):
        raise bad
    return value


def config_for(name_or_path: str | None) -> PhysicsConfig:
    """The config of a profile name or file (None: the default profile).

    Raises:
        ProfileError: See ``load_profile`` and :meth:`PhysicsConfig.from_profile`.
    """
    if name_or_path is None or name_or_path == DEFAULT_PROFILE:
        return DEFAULT_CONFIG
    return PhysicsConfig.from_profile(load_profile(name_or_path))


DEFAULT_CONFIG = PhysicsConfig.from_profile(load_profile(DEFAULT_PROFILE))
"""The config every published BuildArena result of ours uses (profile ``besiege-1``)."""
