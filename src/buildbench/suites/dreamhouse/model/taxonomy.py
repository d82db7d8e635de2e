"""Member taxonomy: the paper's type prefixes, the released keywords, and name matching.

Categories come from names by longest-prefix match over the paper's taxonomy (Prompt 0
Part 3) plus the released harness's extra keywords as aliases (spec §2.3).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import itemgetter

#: The paper's taxonomy (Prompt 0 Part 3), in phase order.
PAPER_CATEGORIES: tuple[str, ...] = (
    "Sill", "BeamPost", "Post",
    "Rim", "Joist", "CenterBeam",
    "SolePlate", "TopPlate", "Stud", "GableStud", "Header", "King", "Trimmer", "Cripple",
    "Ridge", "Rafter", "Collar", "Lookout", "Purlin",
)  # fmt: skip

#: Released README keywords that are not paper prefixes (spec §2.3), mapped to a category.
#: ``Raf`` is an abbreviation of Rafter; the others become categories of their own so the
#: tests can decide how to treat them (hip/valley rafters are rafter-like, a bare
#: ``Plate`` is a wall plate of unknown position, ``Foundation`` a generic foundation part).
ALIASES: Mapping[str, str] = {
    "Raf": "Rafter",
    "Plate": "Plate",
    "Foundation": "Foundation",
    "Hip": "Hip",
    "Valley": "Valley",
}

#: Every category a member can have; its index (``CATEGORY_CODE``) is stored in ``Structure.category_codes``.
CATEGORIES: tuple[str, ...] = PAPER_CATEGORIES + ("Plate", "Foundation", "Hip", "Valley")

#: Subsystem (construction phase) of each category (paper Prompt 0 Part 3, README for aliases).
SUBSYSTEM: Mapping[str, str] = {
    **dict.fromkeys(("Sill", "BeamPost", "Post", "Foundation"), "foundation"),
    **dict.fromkeys(("Rim", "Joist", "CenterBeam"), "floor"),
    **dict.fromkeys(
        ("SolePlate", "TopPlate", "Plate", "Stud", "GableStud", "Header", "King", "Trimmer", "Cripple"),
        "walls",
    ),
    **dict.fromkeys(("Ridge", "Rafter", "Collar", "Lookout", "Purlin", "Hip", "Valley"), "roof"),
}

#: Phase order of the paper (foundation → floor → walls → roof).
PHASES: tuple[str, ...] = ("foundation", "floor", "walls", "roof")

#: Code stored for a name that matches no category.
UNKNOWN_CODE = -1

CATEGORY_CODE: Mapping[str, int] = {c: i for i, c in enumerate(CATEGORIES)}
# Longest keyword first, so BeamPost beats Post, GableStud beats Stud, Trimmer beats Rim.
_KEYWORDS: tuple[tuple[str, str], ...] = tuple(
    sorted(
        [(c, c) for c in PAPER_CATEGORIES] + [(k, v) for k, v in ALIASES.items()],
        key=lambda kv: -len(kv[0]),
    )
)


# Regex alternation tries keywords in order, so longest first makes it a longest-prefix match.
_STRICT_RE = re.compile("|".join(sorted(PAPER_CATEGORIES, key=len, reverse=True)))
_LENIENT_RE = re.compile("|".join(k for k, _ in _KEYWORDS), re.IGNORECASE)
_BY_LOWER = {k.lower(): c for k, c in _KEYWORDS}
_STRICT_HEADS = {c: c for c in PAPER_CATEGORIES}


def classify(name: str, *, strict: bool = False) -> str | None:
    """Category of a member name, or ``None`` when it matches nothing.

    Args:
        name: Member name, e.g. ``"GableStud_03"``.
        strict: Paper rule (Prompt 0 Part 3): the name must *start with* a paper prefix,
            case-sensitively, with no aliases. Otherwise (released README rule) the match is
            case-insensitive, aliases count, and when no keyword starts the name the longest
            keyword found anywhere in it decides (``"Wall_Trimmer_2"`` → Trimmer, not Rim).

    Returns:
        The category with the longest matching prefix (keyword), or ``None``.
    """
    if strict:
        m = _STRICT_RE.match(name)
        return m.group(0) if m else None
    m = _LENIENT_RE.match(name)
    if m:
        return _BY_LOWER[m.group(0).lower()]
    low = name.lower()
    best: tuple[int, int, str] | None = None
    for key, cat in _KEYWORDS:
        pos = low.find(key.lower())
        if pos >= 0 and (best is None or (-len(key), pos) < (best[0], best[1])):
            best = (-len(key), pos, cat)
    return None if best is None else best[2]


def classify_many(names: Sequence[str], *, strict: bool = False) -> list[str | None]:
    """:func:`classify` for many names at once.

    Most names read ``<Type>_<rest>``; when the part before the first underscore is itself
    a keyword it is the longest matching prefix (no keyword contains ``_``), found by one
    dict look-up. Other names take the full :func:`classify` path.
    """
    heads = map(itemgetter(0), map(str.partition, names, repeat("_")))
    # The look-ups run in C (map); names whose head is no keyword are classified one by one.
    if strict:
        found: list[str | None] = list(map(_STRICT_HEADS.get, heads))
    else:
        found = list(map(_BY_LOWER.get, map(str.lower, heads)))
    if None in found:
        for k in [k for k, c in enumerate(found) if c is None]:
            found[k] = classify(names[k], strict=strict)
    return found
