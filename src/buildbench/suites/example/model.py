"""Blocks and the parsing of an agent's block list."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from buildbench.jsonio import parse_json

#: Largest block edge accepted, metres; bigger is an agent mistake, not a design.
MAX_EDGE_M = 20.0


@dataclass(frozen=True)
class Blocks:
    """Axis-aligned blocks: ``mins``/``maxs`` are (n, 3) corner arrays in metres (z up)."""

    mins: np.ndarray
    maxs: np.ndarray

    @property
    def count(self) -> int:
        return int(self.mins.shape[0])

    @classmethod
    def from_centers(cls, centers: np.ndarray, sizes: np.ndarray) -> Blocks:
        half = np.asarray(sizes, dtype=float) / 2.0
        c = np.asarray(centers, dtype=float)
        return cls(c - half, c + half)

    def to_list(self) -> list[dict[str, list[float]]]:
        centers = (self.mins + self.maxs) / 2.0
        sizes = self.maxs - self.mins
        return [{"center": [round(float(v), 6) for v in c], "size": [round(float(v), 6) for v in s]}
                for c, s in zip(centers, sizes, strict=True)]


class BlockListError(ValueError):
    """The agent's block list could not be read; the message says where and why."""


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any:
    """Parse JSON from model text: a fenced block if present, else the whole text."""
    match = _FENCE.search(text)
    body = match.group(1) if match else text
    try:
        return parse_json(body)
    except json.JSONDecodeError as exc:
        raise BlockListError(f"could not parse JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def parse_blocks(data: Any, *, max_blocks: int) -> Blocks:
    """Validate ``{"blocks": [{"center": [x,y,z], "size": [sx,sy,sz]}, ...]}``."""
    items = data.get("blocks") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise BlockListError('expected {"blocks": [...]} or a list of blocks')
    if len(items) > max_blocks:
        raise BlockListError(f"{len(items)} blocks given; this task allows at most {max_blocks}")
    centers, sizes = [], []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise BlockListError(f"block {i}: expected an object with center and size, got {type(item).__name__}")
        c = _vector(item.get("center"), f"block {i} center")
        s = _vector(item.get("size"), f"block {i} size")
        if any(v <= 0 for v in s):
            raise BlockListError(f"block {i} size: every edge must be > 0 m, got {s}")
        if any(v > MAX_EDGE_M for v in s):
            raise BlockListError(f"block {i} size: edges are limited to {MAX_EDGE_M} m, got {s}")
        if any(abs(v) > 1e3 for v in c):
            raise BlockListError(f"block {i} center: coordinates beyond ±1000 m, got {c}")
        centers.append(c)
        sizes.append(s)
    if not items:
        return Blocks(np.zeros((0, 3)), np.zeros((0, 3)))
    return Blocks.from_centers(np.array(centers), np.array(sizes))


def _vector(value: Any, where: str) -> list[float]:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise BlockListError(f"{where}: expected 3 numbers [x, y, z], got {json.dumps(value)[:80]}")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise BlockListError(f"{where}: expected finite numbers, got {json.dumps(value)[:80]}")
        out.append(float(v))
    return out
