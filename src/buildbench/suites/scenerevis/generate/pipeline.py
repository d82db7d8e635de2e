"""SceneChain generation end to end: source filter → Algorithm 1 candidates → rule-based
selection → instructions, reasoning and (optionally) renders → ms-swift records.

Per source room (index i, seed s): the room is prepared (:func:`.flat.prepare_source`) and
must pass the §3.1 filter; ``candidates`` chains are drawn with generators seeded
``[s, i, k]``; the ``keep`` best by the rule-based chain filter are written (the paper draws 10
and keeps 3). Each kept chain gets an instruction and reasoning from generators seeded
``[s, i, rank, 1]`` and ``[s, i, rank, 2]``. The result depends only on (room, i, seed,
options), never on the number of worker processes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from buildbench.parallel import PROCESS, Backend, map_ordered

from .assets import PoolAsset, category_of, default_pool
from .chain_filter import keep_best
from .conversation import chain_id, chain_record, shown_scenes
from .diagnose import passes_source_filter
from .flat import Scene, prepare_source
from .instructions import Instruction, make_instruction
from .reverse import OPS, chain_rng, reverse_chain
from .writer import TextWriter


@dataclass(frozen=True)
class ReverseOptions:
    """Settings of one generation run.

    Attributes:
        images_dir: Where per-turn merged renders go (None: no images, no ``<image>`` tags).
        filter_sources: Apply the §3.1 source filter.
        geometry: The object shapes of that filter (``box``, ``procedural``, ``mesh``).
        mode: ``multi`` or ``single`` (the operation probabilities of Algorithm 1).
        text_model: A :mod:`buildbench.llm` spec that rewrites instructions and reasoning
            (None: deterministic templates only).
    """

    seed: int = 0
    candidates: int = 10
    keep: int = 3
    mode: str = "multi"
    images_dir: Path | None = None
    filter_sources: bool = True
    geometry: str = "box"
    pool: tuple[PoolAsset, ...] | None = None
    text_model: str | None = None


@dataclass
class RunStats:
    scenes: int = 0
    filtered_out: int = 0
    dropped_objects: int = 0
    chains: int = 0
    turns: int = 0
    images: int = 0
    ops: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OPS, 0))

    def add(self, other: RunStats) -> None:
        for k in ("scenes", "filtered_out", "dropped_objects", "chains", "turns", "images"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        for op, n in other.ops.items():
            self.ops[op] += n

    def to_dict(self) -> dict[str, Any]:
        total = sum(self.ops.values()) or 1
        return {"scenes": self.scenes, "filtered_out": self.filtered_out, "dropped_objects": self.dropped_objects,
                "chains": self.chains, "turns": self.turns, "images": self.images, "op_counts": dict(self.ops),
                "op_shares": {k: round(v / total, 4) for k, v in self.ops.items()}}


def _render(scene: Scene, path: Path, seed: int, turn: int) -> None:
    from PIL import Image

    from ..render import render_merged

    flat = {**scene, "objects": [{**o, "category": category_of(o["desc"])} for o in scene["objects"]]}
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(render_merged(flat, seed=seed, turn=turn)).save(path)


def chains_for_scene(scene: Scene, index: int, opts: ReverseOptions) -> tuple[list[dict[str, Any]], RunStats]:
    """The records of one source room (none when it fails the filter)."""
    stats = RunStats(scenes=1)
    source, dropped = prepare_source(scene)
    stats.dropped_objects = dropped
    if not source["objects"] or (opts.filter_sources and not passes_source_filter(source, opts.geometry)):
        stats.filtered_out = 1
        return [], stats
    pool = opts.pool or default_pool()
    candidates = [reverse_chain(source, chain_rng(opts.seed, index, k), pool=pool, mode=opts.mode)
                  for k in range(opts.candidates)]
    records = []
    for rank, (chain, grade) in enumerate(keep_best(candidates, opts.keep)):
        rid = chain_id(source, opts.seed, index, rank)
        images = None
        if opts.images_dir is not None:
            images = []
            for k, shown in enumerate(shown_scenes(chain)):
                path = opts.images_dir / rid / f"step_{k}.png"
                _render(shown, path, opts.seed, k + 1)
                images.append(f"{opts.images_dir.name}/{rid}/step_{k}.png")
            stats.images += len(images)
        writer = TextWriter(opts.text_model)
        draft = make_instruction(source, np.random.default_rng([opts.seed, index, rank, 1]))
        instruction = Instruction(writer.instruction(draft.text, draft.kind == "brief"), draft.kind, draft.style)
        records.append(chain_record(chain, grade, instruction, record_id=rid, writer=writer,
                                    rng=np.random.default_rng([opts.seed, index, rank, 2]), images=images))
        stats.chains += 1
        stats.turns += len(chain.turns)
        for op in chain.ops:
            stats.ops[op] += 1
    return records, stats


_Job = tuple[list[tuple[int, Scene]], ReverseOptions]
#: A batch's JSON lines, its stats, and (from a Ray worker) its renders by path under ``images_dir``.
_Done = tuple[list[str], RunStats, dict[str, bytes]]


def _work_job(job: _Job) -> _Done:
    return (*_work(*job), {})


def _work_remote(job: _Job) -> _Done:
    """A batch on a Ray worker, which may be another machine: renders go to a scratch folder of
    the same name (records name only that) and travel back as bytes."""
    import tempfile

    batch, opts = job
    if opts.images_dir is None:
        return _work_job(job)
    with tempfile.TemporaryDirectory(prefix="buildbench-reverse-") as scratch:
        images = Path(scratch) / opts.images_dir.name
        lines, stats = _work(batch, replace(opts, images_dir=images))
        files = {p.relative_to(images).as_posix(): p.read_bytes() for p in sorted(images.rglob("*")) if p.is_file()}
    return lines, stats, files


def _work(batch: list[tuple[int, Scene]], opts: ReverseOptions) -> tuple[list[str], RunStats]:
    lines: list[str] = []
    stats = RunStats()
    for index, scene in batch:
        records, s = chains_for_scene(scene, index, opts)
        lines.extend(json.dumps(r, ensure_ascii=False) for r in records)
        stats.add(s)
    return lines, stats


def _batches(scenes: Iterable[Scene], size: int) -> Iterator[list[tuple[int, Scene]]]:
    batch: list[tuple[int, Scene]] = []
    for item in enumerate(scenes):
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def generate_chains(scenes: Iterable[Scene], out_jsonl: Path, opts: ReverseOptions, workers: int = 1,
                    backend: Backend = PROCESS) -> RunStats:
    """Write the records of every room to ``out_jsonl`` (room order, then rank order).

    Batches of rooms run in a pool of ``workers`` processes, or as Ray tasks with ``backend``
    ray (renders then come back as bytes and are written here).
    """
    total = RunStats()
    out_jsonl.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_jsonl.with_suffix(out_jsonl.suffix + ".part")
    jobs = ((b, opts) for b in _batches(scenes, 16))
    work = _work_remote if backend.is_ray else _work_job
    with tmp.open("w", encoding="utf-8") as fh:
        for lines, stats, files in map_ordered(work, jobs, workers=min(workers, os.cpu_count() or 1),
                                               backend=backend):
            fh.writelines(line + "\n" for line in lines)
            total.add(stats)
            if files and opts.images_dir is not None:
                _write_files(opts.images_dir, files)
    tmp.replace(out_jsonl)
    return total


def _write_files(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
