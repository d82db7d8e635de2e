"""Seeded LEGO-Bench-style data: houses, fine-grained instructions, misaligned twins.

Writing them in the released layout is :func:`..legobench.write_benchmark` (the reader and the
writer of that layout live together; importing it here would make a cycle).
"""

from .house import build_house
from .pairs import TYPE_SHARES, GenerationError, Pair, draw_n_constraints, generate_benchmark, make_pair
from .twins import perturb, perturbable

__all__ = [
    "TYPE_SHARES",
    "GenerationError",
    "Pair",
    "build_house",
    "draw_n_constraints",
    "generate_benchmark",
    "make_pair",
    "perturb",
    "perturbable",
]
