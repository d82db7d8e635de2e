"""DreamHouse procedural generator: seeded, validator-certified timber-frame houses.

13 styles × 4 roof types × 3 complexities, 1–3 stories, wings and split levels, framed
openings; every structure passes every validator test in both profiles. Start from
:func:`generate_structure` (one task id → :class:`GeneratedHouse`), :func:`iter_dataset`,
:func:`default_split` (the stratified 1,200) and :func:`write_dataset` (files + manifest).
"""

from .api import (
    GENERATOR_VERSION,
    MAX_MEMBERS,
    MIN_MEMBERS,
    GeneratedHouse,
    GenerationError,
    PhaseStep,
    PlacedOpening,
    build_house,
    dataset_task_ids,
    default_split,
    generate_structure,
    iter_dataset,
    style_sizes,
)
from .dataset import (
    CountReport,
    CountStats,
    StoredHouse,
    count_report,
    member_count_distribution,
    read_dataset,
    write_dataset,
)
from .ids import COMPLEXITIES, PAPER_DATASET_SIZE, ROOF_TYPES, STYLE_CODES, STYLE_NAMES, TaskId, style_code
from .params import HouseParams, RoofSpec, SectionSpec, params_from_dict

__all__ = [
    "COMPLEXITIES", "GENERATOR_VERSION", "MAX_MEMBERS", "MIN_MEMBERS", "PAPER_DATASET_SIZE", "ROOF_TYPES",
    "STYLE_CODES", "STYLE_NAMES", "CountReport", "CountStats", "GeneratedHouse", "GenerationError",
    "HouseParams", "PhaseStep", "PlacedOpening", "RoofSpec", "SectionSpec", "StoredHouse", "TaskId", "build_house",
    "count_report", "dataset_task_ids", "default_split", "generate_structure", "iter_dataset",
    "member_count_distribution", "params_from_dict", "read_dataset", "style_code", "style_sizes",
    "write_dataset",
]  # fmt: skip
