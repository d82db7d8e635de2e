"""Scene formats of other projects <-> our :class:`~buildbench.scenes.model.Scene`.

One module per format; :data:`FORMATS` is the one table of them (``buildbench scenes convert
--help`` lists it). A reader takes a parsed JSON document (a file may hold several scenes:
a LayoutGPT output file, a JSONL of ReSpace records) and returns :class:`Item` s, each a
scene with what the file says about the prompt it was made for. A writer takes items and
returns one JSON document, or is None where the format cannot be written. What each format
cannot carry is its ``losses`` line (and ``scenes/README.md``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buildbench.jsonio import parse_json
from buildbench.scenes import scene_warnings
from buildbench.scenes.model import Scene, SceneFormatError, check_scene, relocate


@dataclass
class Item:
    """One scene of a file: ``name`` (its id in the file), ``instruction`` (the prompt, "" if
    the file has none) and ``room`` (room type as the file names it, "" if none)."""

    scene: Scene
    name: str = ""
    instruction: str = ""
    room: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReadOptions:
    """What some formats need from outside the file. ``asset_sizes``: model id -> its box
    ``(sx, sy, sz)`` in metres, y up (SceneEval's scene state names assets, not sizes);
    ``metres_per_px``: LayoutGPT's pixel unit."""

    asset_sizes: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    metres_per_px: float = 0.01


Reader = Callable[[Any, ReadOptions], list[Item]]
Writer = Callable[[Sequence[Item]], Any]


@dataclass(frozen=True)
class Format:
    name: str
    description: str
    read: Reader
    write: Writer | None
    losses: str
    #: Stores an object's heading only: an object tilted out of upright is written upright,
    #: and :func:`write_items` says which.
    heading_only: bool = False


def get_format(name: str) -> Format:
    if name not in FORMATS:
        raise SceneFormatError(f"unknown scene format {name!r} (known: {', '.join(FORMATS)})")
    return FORMATS[name]


def parse_document(path: Path) -> Any:
    """A file's JSON: one document, or a JSONL file as a list of its lines' documents.
    SceneFormatError names the file and line of the first bad one."""
    from buildbench.scenes.io import is_jsonl, scene_text

    try:
        text = scene_text(path)
    except OSError as exc:
        raise SceneFormatError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not text.strip():
        raise SceneFormatError(f"{path}: line 1: empty file")
    if is_jsonl(path):
        docs = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                docs.append(_loads(line, path, n))
        return docs
    return _loads(text, path, 0)


def _loads(text: str, path: Path, line: int) -> Any:
    # parse_json refuses what json.loads lets escape as a bare ValueError (a 10,000-digit
    # integer) or RecursionError (deep nesting), and NaN, as a JSONDecodeError with a position.
    try:
        return parse_json(text, unique_keys=True)
    except json.JSONDecodeError as exc:
        raise SceneFormatError(f"{path}: line {line or exc.lineno}: invalid JSON: {exc.msg}") from None


def read_record(i: int, read: Callable[[Any], Scene], record: Any, at: str = "") -> Scene:
    """``read(record)`` for record ``i`` of a document (``at``: the key of its scene), its errors
    and its elements' origins prefixed with the record's path, so they name the document's keys."""
    prefix = f"[{i}].{at}"
    try:
        with scene_warnings.under(prefix):
            scene = read(record)
    except SceneFormatError as exc:
        raise SceneFormatError(f"{prefix}{exc.args[0]}") from None
    relocate(scene, prefix)
    return scene


def read_items(path: Path, fmt: str, options: ReadOptions | None = None) -> list[Item]:
    """Every scene in file ``path`` read as ``fmt`` (a ``.jsonl`` file: one document a line);
    errors name the file, and the line of a JSONL file."""
    opts = options or ReadOptions()
    read = get_format(fmt).read

    def reader(docs: Any, opts: ReadOptions) -> list[Item]:
        # every format's scenes meet the one notion of a valid room: what converts also scores
        try:
            items = read(docs, opts)
        except SceneFormatError as exc:
            from .front import is_front

            # a 3D-FRONT house read as a room format fails on a key it never has: say what it is
            if fmt != "3dfront" and any(is_front(d) for d in (docs if isinstance(docs, list) else [docs])):
                raise SceneFormatError(f"{exc.args[0]} (the file is a 3D-FRONT house: --from 3dfront)") from None
            raise
        for item in items:
            check_scene(item.scene)
        return items

    from buildbench.scenes.io import is_jsonl

    data = parse_document(path)
    if is_jsonl(path):
        lines = [n for n, line in enumerate(read_text_lines(path), 1) if line.strip()]
        items = []
        for n, doc in zip(lines, data, strict=True):

            def on_line(detail: str, n: int = n) -> str:
                return _joined(f"{path}: line {n}", detail.removeprefix("[0]").lstrip(".: "))

            try:
                with scene_warnings.named(on_line):
                    items += reader([doc], opts)
            except SceneFormatError as exc:
                raise SceneFormatError(on_line(exc.args[0])) from None
    else:

        def in_file(detail: str) -> str:
            from .where import line_of

            # readers name a lone document's keys from "[0]"; the file has no list to index
            detail = detail if isinstance(data, list) else detail.removeprefix("[0]").lstrip(".")
            line = line_of("\n".join(read_text_lines(path)), detail) if detail else None
            return _joined(f"{path}: line {line}" if line else str(path), detail)

        try:
            with scene_warnings.named(in_file):
                items = reader(data, opts)
        except SceneFormatError as exc:
            raise SceneFormatError(in_file(exc.args[0])) from None
    if not items:
        raise SceneFormatError(f"{path}: no {fmt} scene in the file")
    return items


def _joined(place: str, detail: str) -> str:
    """``place: detail``, or ``place`` alone for a detail naming the whole document."""
    return f"{place}: {detail}" if detail else place


def read_text_lines(path: Path) -> list[str]:
    from buildbench.scenes.io import scene_text

    return scene_text(path).splitlines()


def write_items(items: Sequence[Item], path: Path, fmt: str, source: Path | None = None) -> None:
    """Write ``items`` (read from ``source``, named in errors) as ``fmt`` to ``path`` (JSON,
    2-space indent; one document a line when ``path`` ends in ``.jsonl``, as the readers take
    such a file; atomically)."""
    spec = get_format(fmt)
    if spec.write is None:
        raise SceneFormatError(f"format {fmt!r} is read-only ({spec.losses})")
    try:
        data = spec.write(items)
    except SceneFormatError as exc:
        # a scene the format cannot hold (a house without rooms as a SceneReVis room): name it
        for i, item in enumerate(items):
            try:
                spec.write([item])
            except SceneFormatError:
                raise SceneFormatError(f"{source or path}: scene {i + 1}{f' {item.name!r}' if item.name else ''}: cannot be "
                                       f"written as {fmt}: {exc.args[0]}") from None
        raise SceneFormatError(f"{source or path}: cannot be written as {fmt}: {exc.args[0]}") from None
    if spec.heading_only:
        _warn_tilted(items, fmt, source or path)
    try:
        if path.name.lower().endswith(".jsonl"):
            docs = data if isinstance(data, list) else [data]
            text = "\n".join(json.dumps(doc, ensure_ascii=False, allow_nan=False) for doc in docs)
        else:
            text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
    except ValueError:
        # a finite input can overflow on the way (1e308 m in LayoutGPT's pixels): no OUT, not a crash
        raise SceneFormatError(f"{path}: a number overflows in {fmt} (a size or position too large to "
                               "write)") from None
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise SceneFormatError(f"{path}: cannot write ({exc.strerror or exc})") from None


def one_or_list(docs: list[Any]) -> Any:
    """One document as itself, several as a list (how the THOR/SSR writers store many)."""
    return docs[0] if len(docs) == 1 else docs


def as_records(data: Any, what: str) -> list[dict[str, Any]]:
    """``data`` as a list of JSON objects (one object, or a list of them)."""
    records = data if isinstance(data, list) else [data]
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            where = f"[{i}]" if isinstance(data, list) else "document"
            raise SceneFormatError(f"{where}: expected a {what} object, got {type(rec).__name__}")
    return records


def _table() -> dict[str, Format]:
    from . import front, idesign, layoutgpt, layoutvlm, respace, revis, sceneeval, thor

    found = [*thor.FORMATS, *revis.FORMATS, respace.FORMAT, sceneeval.FORMAT, layoutgpt.FORMAT,
             idesign.FORMAT, layoutvlm.FORMAT, front.FORMAT]
    return {f.name: f for f in found}

# last: the format modules import the helpers above
FORMATS: dict[str, Format] = _table()


def _warn_tilted(items: Sequence[Item], fmt: str, source: Path) -> None:
    """One warning per scene naming the objects a heading-only format writes upright."""
    for i, item in enumerate(items):
        # local up (the rotation's middle column) off world up by more than ~0.1 degree
        tilted = [o for o in item.scene.objects if o.rotation[1, 1] < 1.0 - 1e-6]
        if tilted:
            names = ", ".join(repr(o.id) for o in tilted[:3]) + (f" and {len(tilted) - 3} more" if len(tilted) > 3
                                                               else "")
            scene_warnings.warn(f"{source}: scene {i + 1}{f' {item.name!r}' if item.name else ''}",
                                f"{len(tilted)} object(s) tilted out of upright, written upright ({fmt} stores a "
                                f"heading only): {names}", __name__)
