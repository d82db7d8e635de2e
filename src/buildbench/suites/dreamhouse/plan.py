"""The Phase-0 construction plan (paper Prompt 0 Part 4, spec §2.7) and its checks.

A plan passes when (paper §10.1): ``analysis.lot_size`` repeats the injected width,
depth and area to 2 decimals; every member type is in the taxonomy; ``depends_on`` only
names existing steps and forms no cycle; and every section's bounds fit the lot. We also
require the schema's shape (sections named by steps exist, phases and step types from
their enumerations), since the Planner-Managed protocol executes the steps.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from buildbench.jsonio import parse_json

from .model import PAPER_CATEGORIES, PHASES

#: Slack on section extents against the lot, metres (bounds are written to centimetres).
BOUNDS_TOL_M = 0.01
STEP_TYPES: tuple[str, ...] = ("critical", "safe")
#: The released scaffold's places for the plan, tried in turn: a ```json block (any case here),
#: a ``` block with nothing after the backticks (as there, this may be the first block's closing
#: fence), then the text from its first "{" to its last "}". Lines may end LF or CRLF.
_JSON_FENCE = re.compile(r"```json[ \t]*\r?\n(.*?)```", re.DOTALL | re.IGNORECASE)
_BARE_FENCE = re.compile(r"```[ \t]*\r?\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class PlanStep:
    """One step of ``construction_order``.

    Attributes:
        step: Step number as the plan gives it.
        section: Section it builds.
        phase: ``foundation``, ``floor``, ``walls`` or ``roof``.
        story: Story (1-based) when the plan gives one.
        step_type: ``critical`` or ``safe``.
        members: ``(type, count)`` pairs.
        depends_on: Steps that must come first.
    """

    step: int
    section: str
    phase: str
    story: int | None
    step_type: str
    members: tuple[tuple[str, int], ...]
    depends_on: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON form (as in the plan)."""
        return {"step": self.step, "section": self.section, "phase": self.phase, "story": self.story,
                "step_type": self.step_type, "members": [{"type": t, "count": c} for t, c in self.members],
                "depends_on": list(self.depends_on)}


@dataclass(frozen=True)
class PlanCheck:
    """The verdict on a plan: the steps in execution order, or the problems found."""

    steps: tuple[PlanStep, ...]
    problems: tuple[str, ...]
    document: Any = None

    @property
    def ok(self) -> bool:
        """True when the plan has no problems."""
        return not self.problems


def read_plan(text_or_data: Any) -> Any:
    """The plan document from model text, or data as given.

    The text's first JSON found as the released scaffold looks for it (``examples/
    pipeline_scaffold.py``): in a ```json block, else an untagged ``` block, else between
    the first ``{`` and the last ``}`` (a plan with prose around it); a candidate that does
    not parse passes to the next.

    Raises:
        ValueError: When no candidate parses; the message gives the first one's error.
    """
    if not isinstance(text_or_data, str):
        return text_or_data
    text = text_or_data
    candidates = [m.group(1) for m in (_JSON_FENCE.search(text), _BARE_FENCE.search(text)) if m]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start:end + 1])
    errors: list[json.JSONDecodeError] = []
    for body in candidates or [text.strip()]:
        try:
            return parse_json(body)
        except json.JSONDecodeError as exc:
            errors.append(exc)
    first = errors[0]
    raise ValueError(f"the plan is not valid JSON: {first.msg} at line {first.lineno} column {first.colno}")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float: plan data given as objects (parse_json refuses it in text)
        return None
    return number if math.isfinite(number) else None


def _count(value: Any) -> TypeGuard[int]:
    """Whether ``value`` is a member count: a non-negative JSON integer."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_lot(analysis: Any, lot: Mapping[str, float], problems: list[str]) -> None:
    given = analysis.get("lot_size") if isinstance(analysis, Mapping) else None
    if not isinstance(given, Mapping):
        problems.append("analysis.lot_size is missing: copy the given width, depth and area")
        return
    for key in ("width", "depth", "area"):
        v = _number(given.get(key))
        want = round(float(lot[key]), 2)
        if v is None:
            problems.append(f"analysis.lot_size.{key} must be a number (given: {want:.2f})")
        elif round(v, 2) != want:
            problems.append(f"analysis.lot_size.{key} is {v:g} but the given value is {want:.2f}; copy it exactly")


def _check_sections(sections: Any, lot: Mapping[str, float], problems: list[str]) -> set[str]:
    if not isinstance(sections, list) or not sections:
        problems.append("'sections' must be a non-empty list")
        return set()
    names: set[str] = set()
    for i, sec in enumerate(sections):
        where = f"sections[{i}]"
        if not isinstance(sec, Mapping) or not isinstance(sec.get("name"), str):
            problems.append(f"{where} needs a string 'name'")
            continue
        names.add(sec["name"])
        where = f"section {sec['name']!r}"
        b = sec.get("bounds")
        vals = {k: _number(b.get(k)) if isinstance(b, Mapping) else None
                for k in ("x_min", "x_max", "y_min", "y_max", "z_base")}
        bad = [k for k, v in vals.items() if v is None]
        if bad:
            problems.append(f"{where}: bounds need numbers for {', '.join(bad)}")
            continue
        for lo, hi, extent in (("x_min", "x_max", "width"), ("y_min", "y_max", "depth")):
            span = vals[hi] - vals[lo]  # type: ignore[operator]
            if span <= 0:
                problems.append(f"{where}: {hi} must exceed {lo}")
            elif span > float(lot[extent]) + BOUNDS_TOL_M:
                problems.append(f"{where}: {lo}..{hi} spans {span:.2f} m, more than the lot {extent} {lot[extent]:.2f} m")
    return names


def _check_steps(order: Any, sections: set[str], problems: list[str]) -> list[PlanStep]:
    if not isinstance(order, list) or not order:
        problems.append("'construction_order' must be a non-empty list of steps")
        return []
    steps: list[PlanStep] = []
    for i, raw in enumerate(order):
        where = f"construction_order[{i}]"
        if not isinstance(raw, Mapping):
            problems.append(f"{where} must be an object")
            continue
        n = raw.get("step")
        if isinstance(n, bool) or not isinstance(n, int):
            problems.append(f"{where}: 'step' must be an integer")
            continue
        where = f"step {n}"
        sec, phase, kind = raw.get("section"), raw.get("phase"), raw.get("step_type", "critical")
        if not isinstance(sec, str) or sec not in sections:
            problems.append(f"{where}: section {sec!r} is not declared in 'sections'")
        if phase not in PHASES:
            problems.append(f"{where}: phase {phase!r} is not one of {', '.join(PHASES)}")
        if kind not in STEP_TYPES:
            problems.append(f"{where}: step_type {kind!r} is not critical or safe")
        members = []
        listed = raw.get("members") or []
        if not isinstance(listed, list):
            problems.append(f"{where}: members must be a list of {{\"type\", \"count\"}} objects")
            listed = []
        for m in listed:
            t = m.get("type") if isinstance(m, Mapping) else None
            c = m.get("count", 0) if isinstance(m, Mapping) else None
            if t not in PAPER_CATEGORIES:
                problems.append(f"{where}: member type {t!r} is not in the taxonomy")
            elif not _count(c):
                problems.append(f"{where}: count of {t} must be a non-negative integer")
            else:
                members.append((str(t), c))
        deps = raw.get("depends_on") or []
        if not isinstance(deps, list) or not all(isinstance(d, int) and not isinstance(d, bool) for d in deps):
            problems.append(f"{where}: depends_on must be a list of step numbers")
            deps = []
        story = raw.get("story")
        story = story if isinstance(story, int) and not isinstance(story, bool) else None
        steps.append(PlanStep(n, str(sec), str(phase), story, str(kind),
                              tuple(members), tuple(deps)))
    return steps


def _order(steps: list[PlanStep], problems: list[str]) -> list[PlanStep]:
    """Steps in a dependency-respecting order (step number breaks ties); reports cycles."""
    by_n: dict[int, PlanStep] = {}
    for s in steps:
        if s.step in by_n:
            problems.append(f"step number {s.step} is used twice")
        by_n[s.step] = s
    for s in steps:
        unknown = [d for d in s.depends_on if d not in by_n]
        if unknown:
            problems.append(f"step {s.step}: depends_on names missing step(s) {unknown}")
    indeg = {n: sum(1 for d in s.depends_on if d in by_n) for n, s in by_n.items()}
    ready = sorted(n for n, d in indeg.items() if d == 0)
    out: list[PlanStep] = []
    while ready:
        n = ready.pop(0)
        out.append(by_n[n])
        for m, s in by_n.items():
            if n in s.depends_on:
                indeg[m] -= 1
                if indeg[m] == 0:
                    ready.append(m)
                    ready.sort()
    if len(out) < len(by_n):
        cyc = sorted(n for n, d in indeg.items() if d > 0)
        problems.append(f"depends_on has a cycle among steps {cyc}")
    return out


def check_plan(text_or_data: Any, lot: Mapping[str, float]) -> PlanCheck:
    """Check a plan against the injected lot size (``{"width", "depth", "area"}``)."""
    try:
        doc = read_plan(text_or_data)
    except ValueError as exc:
        return PlanCheck((), (str(exc),))
    if not isinstance(doc, Mapping):
        return PlanCheck((), ("the plan must be one JSON object with analysis, sections and construction_order",))
    problems: list[str] = []
    _check_lot(doc.get("analysis"), lot, problems)
    names = _check_sections(doc.get("sections"), lot, problems)
    steps = _order(_check_steps(doc.get("construction_order"), names, problems), problems)
    counts = doc.get("expected_member_counts") or {}
    if not isinstance(counts, Mapping):
        problems.append("expected_member_counts must be an object of type: count")
    else:
        bad = sorted(k for k in counts if k not in PAPER_CATEGORIES)
        if bad:
            problems.append(f"expected_member_counts names types outside the taxonomy: {', '.join(bad)}")
        uncounted = sorted(k for k, v in counts.items() if k in PAPER_CATEGORIES and not _count(v))
        if uncounted:
            problems.append(f"expected_member_counts of {', '.join(uncounted)} must be non-negative integers")
    return PlanCheck(tuple(steps), tuple(problems), doc)
