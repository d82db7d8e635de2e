"""Styles, roof types, complexities and task ids ``<STYLE>_<NN>_<NNNN>``.

Task id fields (released harness, spec §2.4): ``STYLE`` is the style code, ``NN`` the
archetype configuration (01–06) and ``NNNN`` a running index within the style. The paper's
figure ids (AF_01_0060, AF_02_0182, AF_03_0318, AF_03_0392, AF_04_0460, AF_05_0713) show
``NN`` rising with ``NNNN`` inside one style, so we read ``NN`` as contiguous blocks of a
style's index range: configuration ``c`` of a style with ``n`` structures covers indices
``[(c-1)·n/6, c·n/6)``. Our configurations are lot-size bands, 01 the smallest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from buildbench.harness.errors import ConfigError

#: The 13 styles (paper §3), ordered by decreasing structural complexity as in Figure 2,
#: with their codes (project-page manifest; CY and SH from the released server / spec §2.4 [S]).
STYLES: tuple[tuple[str, str], ...] = (
    ("CY", "Courtyard"),
    ("CR", "Cruciform"),
    ("COL", "Colonial"),
    ("SL", "Split-Level"),
    ("BN", "Barn"),
    ("RN", "Ranch"),
    ("TH", "Townhouse"),
    ("ZP", "Z-Plan"),
    ("CH", "Carriage"),
    ("FH", "Farmhouse"),
    ("SB", "Saltbox"),
    ("SH", "Shotgun"),
    ("AF", "A-Frame"),
)
STYLE_CODES: tuple[str, ...] = tuple(c for c, _ in STYLES)
STYLE_NAMES: dict[str, str] = dict(STYLES)
_CODE_BY_NAME = {name.lower(): code for code, name in STYLES}

#: Roof types and complexity levels of the evaluation sampling (paper §4, spec §2.4).
ROOF_TYPES: tuple[str, ...] = ("gable", "hip", "gambrel", "shed")
COMPLEXITIES: tuple[str, ...] = ("simple", "moderate", "complex")
#: Archetype configurations per style (observed 01–06, spec §2.4).
N_CONFIGS = 6
#: Size of the paper's dataset (paper §3).
PAPER_DATASET_SIZE = 26543

_ID_RE = re.compile(r"^([A-Z]{2,3})[_-](\d{2})[_-](\d{4})$")


@dataclass(frozen=True, order=True)
class TaskId:
    """A parsed task id.

    Attributes:
        style: Style code (``AF``, ``COL``…).
        config: Archetype configuration, 1–6 (the ``NN`` field).
        index: Running index within the style, 0–9999 (the ``NNNN`` field).
    """

    style: str
    config: int
    index: int

    def __str__(self) -> str:
        return f"{self.style}_{self.config:02d}_{self.index:04d}"

    @classmethod
    def parse(cls, text: str) -> TaskId:
        """Parse ``AF_01_0060`` (or the paper's ``AF-01-0060``).

        Raises:
            ConfigError: When the text is not a task id or names an unknown style/config.
        """
        m = _ID_RE.match(text.strip())
        if not m:
            raise ConfigError(f"task id {text!r} is not of the form <STYLE>_<NN>_<NNNN>, e.g. AF_01_0060")
        style, config, index = m.group(1), int(m.group(2)), int(m.group(3))
        if style not in STYLE_NAMES:
            raise ConfigError(
                f"task id {text!r}: unknown style code {style!r}; known: {', '.join(STYLE_CODES)}"
            )
        if not 1 <= config <= N_CONFIGS:
            raise ConfigError(f"task id {text!r}: configuration {config:02d} is outside 01–{N_CONFIGS:02d}")
        return cls(style, config, index)


def style_code(style: str) -> str:
    """Code for a style given by code (``AF``) or name (``A-Frame``, case-insensitive).

    Raises:
        ConfigError: For an unknown style.
    """
    if style in STYLE_NAMES:
        return style
    code = _CODE_BY_NAME.get(style.strip().lower())
    if code is None:
        known = ", ".join(f"{c} ({n})" for c, n in STYLES)
        raise ConfigError(f"unknown DreamHouse style {style!r}; known: {known}")
    return code


def config_for_index(index: int, style_size: int) -> int:
    """The configuration block (1–6) holding ``index`` in a style of ``style_size`` structures."""
    if style_size <= 0 or not 0 <= index < style_size:
        raise ConfigError(f"index {index} is outside a style of {style_size} structures")
    return 1 + index * N_CONFIGS // style_size


def roof_for_index(index: int) -> str:
    """Roof type of a running index: the four types in turn, so every block is roof-balanced."""
    return ROOF_TYPES[index % len(ROOF_TYPES)]


def complexity_for_index(index: int) -> str:
    """Complexity of a running index: cycles within each roof type (simple, moderate, complex)."""
    return COMPLEXITIES[(index // len(ROOF_TYPES)) % len(COMPLEXITIES)]
