"""The BuildArena block catalogue: the released block YAML files as typed specs.

Loaded from ``data/blocks/*.yaml`` (copied from the released code, CC BY-NC
4.0, see ``data/README.md``). Sizes are Besiege units, masses Besiege mass
units, local coordinates in the virtual (y-up) frame; see ``model``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

import yaml

COLLIDER_SCALE = 0.8
"""Colliders are shrunk by this factor about the block's local origin so
that face-to-face contact is not an overlap (released code, spec 2.2)."""

MAX_COORDINATE = 1e6
"""Largest absolute coordinate (units) any block may reach; beyond it the
floating-point geometry is meaningless."""

WHEEL_RPM = 100.0
"""Powered Wheel motor speed (block description, paper App. E.2)."""

CANNON_RECOIL_MASS_UNITS = 1.6
"""Water Cannon recoil equals the weight of this many mass units (App. E.2)."""

STEAM_FACTOR = 8.6
"""Recoil multiplier while a Water Cannon is heated (App. E.2)."""

TORCH_HEAT_RADIUS = 0.3
"""Radius of the Torch heating sphere, centred at position + direction (App. E.2)."""

STARTING_BLOCK = "Starting Block"
BlockKind = Literal["basic", "pointer", "connection"]


@dataclass(frozen=True)
class FaceSpec:
    """An attachable face in block-local virtual coordinates.

    Attributes:
        label: Face letter (``A``..``F``).
        rel_pos: Face centre as a fraction of ``BlockSpec.shape``.
        normal: Outward unit normal.
    """

    label: str
    rel_pos: tuple[float, float, float]
    normal: tuple[float, float, float]


@dataclass(frozen=True)
class ShapeSpec:
    """A box or a z-axis cylinder in block-local virtual coordinates (units).

    Attributes:
        kind: ``"box"`` or ``"cylinder"``.
        extents: Full box sizes along local x, y, z (box only).
        radius: Cylinder radius (cylinder only).
        height: Cylinder length along local z (cylinder only).
        centre: Local centre of the shape.
    """

    kind: Literal["box", "cylinder"]
    extents: tuple[float, float, float] = (0.0, 0.0, 0.0)
    radius: float = 0.0
    height: float = 0.0
    centre: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @property
    def is_empty(self) -> bool:
        """True for the zero-size shapes of connectors."""
        if self.kind == "box":
            return min(self.extents) <= 0.0
        return self.radius <= 0.0 or self.height <= 0.0


@dataclass(frozen=True)
class BlockSpec:
    """One block type of the catalogue (released ``blocks/configs/*.yaml``).

    Attributes:
        name: Display name, e.g. ``"Small Wooden Block"``.
        game_id: Besiege block id written to ``.bsg``.
        kind: ``basic`` (has faces or is a wheel), ``pointer`` (torch,
            cannon) or ``connection`` (brace, winch).
        shape: Nominal size; face centres are ``rel_pos * shape``.
        scale: Besiege scale written to ``.bsg`` (only the Ballast differs).
        collider: Collision shape after the 0.8 shrink, or None (connectors).
        outline: Visual/physical body shape (not shrunk), for physics.
        vec_base: Local pointer direction (``[0, 0, 1]`` for blocks with faces).
        center_offset: Distance of the displayed position from the attach face.
        faces: Attachable faces in label order.
        actions: Controllable actions (``spinning_forward``, ``hold_to_fire``…).
        spin_face: Face whose normal is the spin axis, or None.
        spin_sign: Sign (``rel``) applied to that normal.
        mass: Mass in Besiege mass units (YAML ``weight``).
        cost: Released per-block cost integer.
        description: Text shown to models in the block catalogue.
        disabled: True for blocks that models may not use (the Ballast).
        descriptor: Extra caption kind (``torch``/``water_cannon``) or None.
        data_template: Besiege ``<Data>`` XML template (may be empty).
        motor_rpm: Wheel motor speed in rpm (wheels only).
        recoil_mass_units: Thrust as the weight of this many mass units (cannons only).
        steam_factor: Thrust multiplier when heated (cannons only).
        heat_radius: Heating sphere radius in units (torches only).
    """

    name: str
    game_id: int
    kind: BlockKind
    shape: tuple[float, float, float]
    scale: tuple[float, float, float]
    collider: ShapeSpec | None
    outline: ShapeSpec
    vec_base: tuple[float, float, float]
    center_offset: float
    faces: tuple[FaceSpec, ...]
    actions: tuple[str, ...]
    spin_face: str | None
    spin_sign: int
    mass: float
    cost: int
    description: str
    disabled: bool
    descriptor: str | None
    data_template: str
    motor_rpm: float | None = None
    recoil_mass_units: float | None = None
    steam_factor: float | None = None
    heat_radius: float | None = None

    @property
    def is_connector(self) -> bool:
        """True for Brace and Winch."""
        return self.kind == "connection"

    def face(self, label: str) -> FaceSpec | None:
        """The face with this label, or None."""
        for f in self.faces:
            if f.label == label:
                return f
        return None


def _vec3(raw: Any) -> tuple[float, float, float]:
    values = [float(v) for v in raw]
    return (values[0], values[1], values[2])


def _shape(raw: dict[str, Any], root: tuple[float, float, float], shrink: float) -> ShapeSpec:
    translation = _vec3(raw.get("translation", [[0, 0, 0]])[0])
    centre = tuple(shrink * (r + t) for r, t in zip(root, translation, strict=True))
    if raw["type"] == "cylinder":
        return ShapeSpec(
            "cylinder",
            radius=shrink * float(raw["radius"]),
            height=shrink * float(raw["height"]),
            centre=_vec3(centre),
        )
    extents = _vec3(raw["extents"][0])
    return ShapeSpec("box", extents=_vec3([shrink * e for e in extents]), centre=_vec3(centre))


def _spec_from_yaml(raw: dict[str, Any]) -> BlockSpec:
    root = _vec3(raw.get("root", [0, 0, 0]))
    faces = tuple(
        FaceSpec(label, _vec3(pair[0]), _vec3(pair[1])) for label, pair in (raw.get("faces") or {}).items()
    )
    spin = raw.get("spin") or None
    collider = None if raw["type"] == "connection" else _shape(raw["collider"], root, COLLIDER_SCALE)
    return BlockSpec(
        name=str(raw["name"]),
        game_id=int(raw["id"]),
        kind=raw["type"],
        shape=_vec3(raw["shape"]),
        scale=_vec3(raw.get("scale", [1, 1, 1])),
        collider=collider,
        outline=_shape(raw["outline"], root, 1.0),
        vec_base=_vec3(raw["vec_base"]),
        center_offset=float(raw["center_offset"]),
        faces=faces,
        actions=tuple((raw.get("locomotion") or {}).keys()),
        spin_face=str(spin["parallel_to"]) if spin else None,
        spin_sign=int(spin["rel"]) if spin else 0,
        mass=float(raw["weight"]),
        cost=int(raw["cost"]),
        description=" ".join(str(raw.get("description", "")).split()),
        disabled=bool(raw.get("disable", False)),
        descriptor=raw.get("descriptor"),
        data_template=str(raw.get("data") or ""),
        motor_rpm=WHEEL_RPM if spin else None,
        recoil_mass_units=CANNON_RECOIL_MASS_UNITS if raw.get("shoot") else None,
        steam_factor=STEAM_FACTOR if raw.get("shoot") else None,
        heat_radius=TORCH_HEAT_RADIUS if raw.get("descriptor") == "torch" else None,
    )


@dataclass(frozen=True)
class Catalogue:
    """All block types by name, in a fixed order.

    Attributes:
        specs: Block specs keyed by display name.
    """

    specs: dict[str, BlockSpec]

    def get(self, name: str) -> BlockSpec | None:
        """The spec named ``name`` (exact, case-sensitive as in the original), or None."""
        return self.specs.get(name)

    def buildable(self) -> list[str]:
        """Block names a model may attach (no starting block, connector or disabled block)."""
        return [
            s.name
            for s in self.specs.values()
            if s.name != STARTING_BLOCK and not s.is_connector and not s.disabled
        ]

    def connectors(self) -> list[str]:
        """Connector names (Brace, Winch)."""
        return [s.name for s in self.specs.values() if s.is_connector]

    def describe(self) -> str:
        """The catalogue text injected into role prompts (spec 1.3, 4.4: the released code never did)."""
        lines = ["Available blocks:"]
        for name in self.buildable():
            lines.append(f"- {name}: {self.specs[name].description}")
        lines.append("Available connectors:")
        for name in self.connectors():
            lines.append(f"- {name}: {self.specs[name].description}")
        lines.append(
            "Connectors can not be attached to other blocks, they can only connect two attachable faces. "
            "Connectors do not have physical volume nor collider."
        )
        return "\n".join(lines)


_ORDER = (
    "starting_block",
    "small_wooden_block",
    "powered_wheel",
    "water_cannon",
    "torch",
    "brace",
    "winch",
    "ballast_",
)


@functools.cache
def load_catalogue() -> Catalogue:
    """Load the shipped block YAML files (cached; the result is shared, do not mutate)."""
    folder = resources.files("buildbench.suites.buildarena") / "data" / "blocks"
    specs: dict[str, BlockSpec] = {}
    for stem in _ORDER:
        raw = yaml.safe_load((folder / f"{stem}.yaml").read_text(encoding="utf-8"))
        spec = _spec_from_yaml(raw)
        specs[spec.name] = spec
    return Catalogue(specs)
