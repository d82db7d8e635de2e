"""DreamHouse structure model: named oriented boxes ("members") and their collection.

A member is a box with full local sizes ``size_m`` (metres, the scaled Blender
``dimensions``) placed by a rigid 4x4 world transform ``matrix_world`` (spec §2.2). Its
category comes from its name by longest-prefix match over the paper's taxonomy (Prompt 0
Part 3) plus the released harness's extra keywords as aliases (spec §2.3).

A :class:`Structure` keeps members as numpy arrays (sizes ``(n, 3)``, matrices
``(n, 4, 4)``, derived world AABBs) so the validator works on whole arrays. It reads and
writes the released submission JSON (``{"members": [{name, location, dimensions,
bbox_world_corners, matrix_world}]}``) and our own JSON. Reading accepts any finite
numbers (zero or negative sizes, shears, members far away) so the validator can report them;
only a malformed file (a non-finite number included) raises :class:`StructureFormatError`,
naming the member index, name and field.
"""

from .io import StructureFormatError, load_structure, parse_document
from .structure import FORMAT_ID, FORMAT_VERSION, Member, Structure, euler_xyz_matrix
from .taxonomy import (
    ALIASES,
    CATEGORIES,
    CATEGORY_CODE,
    PAPER_CATEGORIES,
    PHASES,
    SUBSYSTEM,
    UNKNOWN_CODE,
    classify,
    classify_many,
)

__all__ = [
    "ALIASES",
    "CATEGORIES",
    "CATEGORY_CODE",
    "FORMAT_ID",
    "FORMAT_VERSION",
    "Member",
    "PAPER_CATEGORIES",
    "PHASES",
    "SUBSYSTEM",
    "Structure",
    "StructureFormatError",
    "UNKNOWN_CODE",
    "classify",
    "classify_many",
    "euler_xyz_matrix",
    "load_structure",
    "parse_document",
]
