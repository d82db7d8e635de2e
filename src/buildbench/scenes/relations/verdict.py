"""The answer every relation gives, and the argument checks relations share."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from buildbench.scenes.model import Scene
from buildbench.scenes.relations.index import Element, RelationError, SceneIndex, index_of


@dataclass(frozen=True)
class Verdict:
    """Whether a relation holds, with the number it was decided on.

    Attributes:
        holds: The decision.
        value: The measured quantity the decision compares with its threshold (a distance
            in metres, an angle in degrees, an area in m², a count…); the explanation and
            the relation's docstring say which.
        explanation: One sentence naming every element by its full id, the measurement and
            the threshold, e.g. ``"sofa-0 (living room) is 0.62 m from coffee_table-0
            (living room): near (<= 1.00 m)"``.
        evidence: The numbers behind it (JSON-ready: floats, strings, lists).
    """

    holds: bool
    value: float
    explanation: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.holds


def resolve(scene: Scene, relation: str, role_ids: Mapping[str, str], kinds: Mapping[str, tuple[str, ...]]) -> tuple[
    SceneIndex, list[Element]
]:
    """The index and elements named in ``role_ids``, each checked against its allowed kinds.

    Raises:
        UnknownIdError: an id names nothing in the scene.
        RelationError: an element is of a kind the relation does not apply to, or one
            element fills two roles.
    """
    index = index_of(scene)
    elements = []
    for role, element_id in role_ids.items():
        element = index.element(scene, element_id)
        allowed = kinds[role]
        if element.kind not in allowed:
            raise RelationError(
                f"{relation}: {element_id!r} (argument {role}) is a {element.kind}, but {relation} takes "
                f"{' or '.join(allowed)} there"
            )
        elements.append(element)
    ids = list(role_ids.values())
    if len(set(ids)) != len(ids):
        raise RelationError(f"{relation}: the same element is named twice ({', '.join(map(repr, ids))})")
    return index, elements


def threshold(relation: str, name: str, value: float, *, allow_negative: bool = False) -> float:
    """A finite threshold (non-negative unless allowed), or a one-line error naming it."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise RelationError(f"{relation}: {name} must be a number, got {value!r}") from None
    if not math.isfinite(x) or (x < 0 and not allow_negative):
        raise RelationError(f"{relation}: {name} must be a finite {'' if allow_negative else 'non-negative '}"
                            f"number, got {value!r}")
    return x


def metres(x: float) -> str:
    return f"{x:.2f} m"


def degrees(x: float) -> str:
    return f"{x:.1f}°"
