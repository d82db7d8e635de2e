"""Instruction–scene pairs: an aligned house, its instruction, and a misaligned twin.

For pair ``i`` of seed ``s`` (``numpy.random.default_rng([s, i])``, so any pair can be
regenerated alone): build a house, draw the number of constraints (spec 5.2: mostly 8–12,
mean about 9.6, some 2–7 and some over 12) and split it over the four types in the
paper's shares (:data:`TYPE_SHARES`), collect that many distinct constraints that hold on
the house, and write the instruction as their template sentences. The twin breaks one or
two chosen constraints by an edit (:mod:`.twins`); every constraint is then re-checked on
both scenes *after* a round trip through AI2-THOR JSON, and the pair is kept only if the
aligned scene satisfies all constraints and the twin fails exactly the chosen ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from buildbench.harness import Task
from buildbench.scenes.io import load_scene, write_thor
from buildbench.scenes.model import Scene

from ..check.evaluate import check
from ..check.select import candidates
from ..constraints import Program, render
from ..task_build import make_task, twin_ids
from ..task_records import ConstraintSpec, spec_for
from .facts import true_facts
from .house import build_house
from .twins import perturb, perturbable

#: Share of each constraint type, estimated from the paper's Table 3 weights (spec 5.2).
TYPE_SHARES: dict[str, float] = {"FL": 0.217, "MS": 0.159, "OS": 0.201, "OP": 0.423}
#: Order of the types in an instruction: the house, its surfaces, what is in it, how it looks.
_ORDER = ("FL", "MS", "OP", "OS")
_HOUSE_TRIES = 8
_TWIN_TRIES = 40


class GenerationError(RuntimeError):
    """A pair could not be generated (names the pair and seed)."""


@dataclass(frozen=True)
class Pair:
    """One aligned scene and its misaligned twin for one instruction."""

    pair_id: str
    instruction: str
    constraints: tuple[ConstraintSpec, ...]
    aligned: dict
    misaligned: dict
    violated: tuple[str, ...]

    def tasks(self) -> list[Task]:
        n = len(self.constraints)
        broken = set(self.violated)
        aligned_id, misaligned_id = twin_ids(self.pair_id)
        return [
            make_task(aligned_id, instruction=self.instruction, scene=self.aligned,
                      constraints=self.constraints, labels=[True] * n, pair=self.pair_id, aligned=True),
            make_task(misaligned_id, instruction=self.instruction, scene=self.misaligned,
                      constraints=self.constraints, labels=[c.id not in broken for c in self.constraints],
                      pair=self.pair_id, aligned=False, violated=self.violated),
        ]


def draw_n_constraints(rng: np.random.Generator) -> int:
    """Constraints per instruction: 15% simple (2–7), 75% moderate (8–12, around 9.8),
    10% complex (13–22)."""
    u = rng.random()
    if u < 0.15:
        return int(rng.integers(2, 8))
    if u < 0.90:
        return int(np.clip(round(rng.normal(9.8, 1.1)), 8, 12))
    return int(rng.integers(13, 23))


def _type_counts(rng: np.random.Generator, n: int) -> dict[str, int]:
    counts = rng.multinomial(n, [TYPE_SHARES[t] for t in _ORDER])
    return {t: int(c) for t, c in zip(_ORDER, counts, strict=True)}


def _collect(scene: Scene, rng: np.random.Generator, n: int) -> list[Program]:
    wanted = _type_counts(rng, n)
    seen: set[str] = set()
    chosen: dict[str, list[Program]] = {t: true_facts(scene, t, k, rng, seen=seen) if k else [] for t, k in wanted.items()}
    short = n - sum(len(v) for v in chosen.values())
    for t in ("OP", "FL", "MS", "OS"):  # a type that ran out of facts is made up by the others
        if short <= 0:
            break
        more = true_facts(scene, t, short, rng, seen=seen)
        chosen[t] += more
        short -= len(more)
    return [p for t in _ORDER for p in chosen[t]]


def _round_trip(scene: Scene) -> tuple[dict, Scene]:
    data = write_thor(scene)
    return data, load_scene(data)


def _labels(scene: Scene, programs: list[Program]) -> list[bool | None]:
    pool = candidates(scene)
    out: list[bool | None] = []
    for p in programs:
        try:
            out.append(check(scene, p, pool).holds)
        except (KeyError, ValueError):
            out.append(None)
    return out


def _twin(scene: Scene, programs: list[Program], rng: np.random.Generator) -> tuple[dict, tuple[int, ...]] | None:
    targets = [i for i, p in enumerate(programs) if perturbable(p)]
    if not targets:
        return None
    for _ in range(_TWIN_TRIES):
        k = 2 if len(targets) >= 2 and rng.random() < 0.4 else 1
        chosen = tuple(sorted(int(targets[int(j)]) for j in rng.permutation(len(targets))[:k]))
        twin: Scene | None = scene
        for i in chosen:
            twin = perturb(twin, programs[i], rng) if twin is not None else None
        if twin is None:
            continue
        data, read_back = _round_trip(twin)
        labels = _labels(read_back, programs)
        if [i for i, ok in enumerate(labels) if ok is not True] == list(chosen):
            return data, chosen
    return None


def make_pair(index: int, seed: int = 0) -> Pair:
    """Pair ``index`` of the benchmark of ``seed`` (deterministic, independent of the others)."""
    rng = np.random.default_rng([seed, index])
    pair_id = f"lego-{seed}-{index:03d}"
    for _ in range(_HOUSE_TRIES):
        n = draw_n_constraints(rng)
        n_rooms = int(rng.integers(4, 6)) if n > 12 else int(rng.choice([2, 3, 4, 5], p=[0.2, 0.3, 0.3, 0.2]))
        scene = build_house(rng, n_rooms)
        programs = _collect(scene, rng, n)
        if len(programs) < min(n, 2):
            continue
        texts = [render(p) for p in programs]
        instruction = " ".join(texts)
        scene.query = instruction
        aligned, read_back = _round_trip(scene)
        if not all(x is True for x in _labels(read_back, programs)):
            continue
        twin = _twin(read_back, programs, rng)
        if twin is None:
            continue
        specs = tuple(spec_for(f"c{i}", t, p) for i, (t, p) in enumerate(zip(texts, programs, strict=True)))
        return Pair(pair_id, instruction, specs, aligned, twin[0], tuple(f"c{i}" for i in twin[1]))
    raise GenerationError(f"pair {index} (seed {seed}): no house gave a valid pair in {_HOUSE_TRIES} tries")


def generate_benchmark(n_pairs: int = 130, seed: int = 0) -> list[Pair]:
    """The paper's design by default: 130 aligned scenes and 130 misaligned twins."""
    if not isinstance(n_pairs, int) or isinstance(n_pairs, bool) or n_pairs < 1 or n_pairs > 100_000:
        raise ValueError(f"n_pairs: expected an integer in [1, 100000], got {n_pairs!r}")
    return [make_pair(i, seed) for i in range(n_pairs)]
