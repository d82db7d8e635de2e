"""Score a scene generator's outputs with LEGO-Eval and SceneReVis (``buildbench scenes evaluate``).

A generator's folder holds its scenes in one format (:mod:`buildbench.scenes.formats`): every
``.json``/``.jsonl`` file in it (sub-folders not read) except ``prompts.jsonl``, each file one
or more scenes. The prompt of a scene is what its file says (a THOR house's ``query``,
I-Design's and LayoutVLM's task text; LayoutGPT's room type and size) unless
``prompts.jsonl`` gives it (for ``sceneeval``, SceneEval's own ``annotations.csv`` in the folder
or its parent also serves: ``Description`` of ``ID`` is the prompt of ``scene_{ID}.json``): one
JSON object a line::

    {"scene": "scene_0.json", "instruction": "A bedroom with a queen bed ...",
     "room": "bedroom", "constraints": [{"id": "c1", "text": "...", "type": "OP"}]}

``scene`` names a file (its only scene) or a scene's name in a file (LayoutGPT's
``query_id``, a house's ``id``); ``room`` and ``constraints`` are optional. Without
``constraints`` each sentence of the instruction is one, typed by LEGO-Eval's template grammar
(a sentence outside it is counted as ``OS`` and the deterministic evaluator leaves it unknown).

Each generator becomes one row: its episodes carry the generator's name as their ``agent``
(the folder's name, or ``name``), so ``buildbench report RUN/legoeval`` shows one Table 3 row
per generator beside the paper's, and ``buildbench report RUN/scenerevis`` the OBR/CNR/voxel/
judge rows. LEGO-Eval's verdicts come from an evaluator agent (``deterministic`` by default,
or a model-backed one with ``model``), played through the harness as any LEGO-Eval episode;
the evaluator and options are in the run's manifest. SceneReVis scores each scene as a final
scene (its physics, voxel loss and the rule judge, labelled not comparable with the paper's
GPT-5 scores). Every input is read and checked before any folder is made: a bad one is a
:class:`~buildbench.scenes.model.SceneFormatError` naming the file and line, and nothing is left.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buildbench.jsonio import parse_json
from buildbench.scenes.formats import Item, ReadOptions, parse_document, read_items
from buildbench.scenes.model import SceneFormatError

SUITES = ("legoeval", "scenerevis")
PROMPTS_FILE = "prompts.jsonl"
#: The type a sentence outside LEGO-Eval's template grammar is counted under.
UNREAD_TYPE = "OS"


@dataclass
class Generated:
    """One scene of a generator with its prompt."""

    generator: str
    key: str
    item: Item
    instruction: str
    room: str
    constraints: list[dict[str, str]] = field(default_factory=list)


def room_key(room: str) -> str:
    """SceneReVis's room group (``living room`` -> ``living_room``)."""
    return re.sub(r"[\s-]+", "_", room.strip().lower())


def _prompt_lines(path: Path) -> dict[str, dict[str, Any]]:
    from buildbench.inputs import read_text
    from buildbench.suites.legoeval.tools.registry import CONSTRAINT_TYPES

    out: dict[str, dict[str, Any]] = {}
    if not path.exists() and not path.is_symlink():
        return out
    try:  # a prompts.jsonl that is a folder, a FIFO or not UTF-8 is a mistake, not "no prompts"
        text = read_text(path)
    except OSError as exc:
        raise SceneFormatError(f"{path}: cannot read ({exc.strerror or exc})") from None

    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = parse_json(line, unique_keys=True)
        except json.JSONDecodeError as exc:
            raise SceneFormatError(f"{path}: line {n}: invalid JSON: {exc.msg}") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("scene"), str):
            raise SceneFormatError(f"{path}: line {n}: expected an object with 'scene' (a file or scene name)")
        for key in ("instruction", "room"):
            if key in rec and not isinstance(rec[key], str):
                raise SceneFormatError(f"{path}: line {n}: {key}: expected a string")
        cons = rec.get("constraints")
        if cons is not None and not (isinstance(cons, list) and all(
                isinstance(c, dict) and isinstance(c.get("text"), str) for c in cons)):
            raise SceneFormatError(f"{path}: line {n}: constraints: expected a list of objects with 'text'")
        for i, c in enumerate(cons or []):
            # a type outside the four would be counted under none of Table 3's columns
            if c.get("type") is not None and c["type"] not in CONSTRAINT_TYPES:
                raise SceneFormatError(f"{path}: line {n}: constraints[{i}].type: {c['type']!r} is not one of "
                                       f"{', '.join(CONSTRAINT_TYPES)}")
        ids = [str(c["id"]) for c in cons or [] if c.get("id") is not None]
        if len(set(ids)) != len(ids):
            raise SceneFormatError(f"{path}: line {n}: constraints: id "
                                   f"{next(i for i in ids if ids.count(i) > 1)!r} given twice")
        if rec["scene"] in out:
            raise SceneFormatError(f"{path}: line {n}: scene {rec['scene']!r} given twice")
        out[rec["scene"]] = {**rec, "_line": n}
    return out


def _sceneeval_annotations(folder: Path) -> dict[str, dict[str, Any]]:
    """SceneEval's own layout: ``input/annotations.csv`` (``ID``, ``Description``, ...) beside
    ``input/<Method>/scene_{ID}.json``; read from the folder or its parent, as prompts of
    ``scene_{ID}.json``."""
    import csv
    import io

    from buildbench.inputs import read_text

    for path in (folder / "annotations.csv", folder.parent / "annotations.csv"):
        if path.exists():
            try:
                rows = list(csv.DictReader(io.StringIO(read_text(path), newline="")))
            except (OSError, csv.Error) as exc:
                raise SceneFormatError(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
            out = {}
            for n, row in enumerate(rows, 2):
                if not row.get("ID") or not (row.get("Description") or "").strip():
                    raise SceneFormatError(f"{path}: line {n}: expected ID and Description (SceneEval's columns)")
                out[f"scene_{row['ID'].strip()}.json"] = {"scene": f"scene_{row['ID'].strip()}.json",
                                                          "instruction": row["Description"].strip(), "_line": n,
                                                          "_file": path.name}
            return out
    return {}


def constraints_of(instruction: str) -> list[dict[str, str]]:
    """One constraint per sentence of ``instruction``, typed by LEGO-Eval's grammar."""
    from buildbench.suites.legoeval.constraints.program import constraint_type
    from buildbench.suites.legoeval.constraints.text import TextError, parse

    out: list[dict[str, str]] = []
    for sentence in re.split(r"(?<=[.!?])\s+", instruction.strip()):
        if not sentence.strip():
            continue
        try:
            kind = str(constraint_type(parse(sentence)))
        except TextError:
            kind = UNREAD_TYPE
        out.append({"id": f"c{len(out) + 1}", "text": sentence.strip(), "type": kind})
    return out


def _is_scene_file(path: Path) -> bool:
    """A ``.json``/``.jsonl`` file, also gzip-compressed (the scene readers read ``.gz`` as its content)."""
    suffixes = path.suffixes[-2:]
    return path.suffix in (".json", ".jsonl") or (len(suffixes) == 2 and suffixes[0] in (".json", ".jsonl")
                                                  and suffixes[1] == ".gz")


def read_generator(folder: Path, fmt: str, name: str | None = None,
                   options: ReadOptions | None = None) -> list[Generated]:
    """Every scene of a generator's ``folder`` with its prompt; SceneFormatError names the file."""
    if not folder.is_dir():
        raise SceneFormatError(f"{folder}: not a folder of generated scenes")
    generator = name or folder.resolve().name
    prompts = _prompt_lines(folder / PROMPTS_FILE)
    annotations = _sceneeval_annotations(folder) if fmt == "sceneeval" else {}
    files = sorted(p for p in folder.iterdir() if _is_scene_file(p) and p.name != PROMPTS_FILE and p.is_file())
    if not files:
        raise SceneFormatError(f"{folder}: no scene files (.json or .jsonl, also gzip-compressed: .json.gz)")
    used: dict[str, list[str]] = {}
    out: list[Generated] = []
    for path in files:
        items = read_items(path, fmt, options)
        for k, item in enumerate(items):
            key = path.name if len(items) == 1 else f"{path.name}#{item.name or k}"
            given = prompts.get(path.name) if len(items) == 1 else None
            given = given or prompts.get(item.name)
            if given is not None:
                used.setdefault(str(given["scene"]), []).append(key)
            else:
                given = annotations.get(path.name)
            instruction = str((given or {}).get("instruction") or item.instruction).strip()
            where = f"{given.get('_file', PROMPTS_FILE)} line {given['_line']}" if given else str(path)
            if not instruction:
                # a file of several scenes is keyed by each scene's name (the file's name would match none)
                named = path.name if len(items) == 1 or not item.name else item.name
                raise SceneFormatError(f"{path}: scene {item.name or k!r} has no prompt (give its instruction in "
                                       f"{folder / PROMPTS_FILE}: {{\"scene\": {json.dumps(named)}, "
                                       "\"instruction\": ...})")
            cons = (given or {}).get("constraints")
            constraints = [{"id": str(c.get("id") or f"c{i + 1}"), "text": c["text"],
                            "type": str(c.get("type") or UNREAD_TYPE)} for i, c in enumerate(cons)] if cons else \
                constraints_of(instruction)
            if not constraints:
                raise SceneFormatError(f"{where}: scene {key!r}: no constraint in its instruction")
            room = str((given or {}).get("room") or item.room or "")
            out.append(Generated(generator, key, item, instruction, room, constraints))
    # one prompt line for two scenes that share a name would judge both on it: say which
    twice = next(((k, keys) for k, keys in used.items() if len(keys) > 1), None)
    if twice:
        raise SceneFormatError(f"{folder / PROMPTS_FILE}: line {prompts[twice[0]]['_line']}: scene {twice[0]!r} "
                               f"names {len(twice[1])} scenes ({', '.join(twice[1][:3])}): give them distinct names")
    unknown = sorted(set(prompts) - set(used))
    if unknown:
        line = prompts[unknown[0]]["_line"]
        raise SceneFormatError(f"{folder / PROMPTS_FILE}: line {line}: scene {unknown[0]!r} is not in the folder")
    return out


def _scene_json(g: Generated) -> dict[str, Any]:
    """The scene as the suites read it: SceneReVis flat JSON for one room (it keeps the
    boxes), THOR house JSON for a house."""
    from buildbench.scenes.revis import write_revis
    from buildbench.scenes.thor import write_thor

    scene = g.item.scene
    if len(scene.rooms) == 1 and not scene.walls:
        return write_revis(scene)
    if not scene.query:
        scene.query = g.instruction
    return write_thor(scene)


def _task_id(g: Generated, n: int) -> str:
    return f"{g.generator}-{n:04d}"


def legoeval_task(g: Generated, n: int) -> Any:
    from buildbench.harness import Task
    from buildbench.suites.legoeval.task_records import bucket_of
    from buildbench.suites.legoeval.tools.registry import CONSTRAINT_TYPES

    k = len(g.constraints)
    return Task(id=_task_id(g, n), suite="legoeval",
                inputs={"instruction": g.instruction, "scene": _scene_json(g), "constraints": g.constraints},
                target={"valid": None, "labels": None, "programs": [None] * k, "plans": [None] * k},
                metadata={"pair": _task_id(g, n), "aligned": None, "n_constraints": k, "bucket": bucket_of(k),
                          "types": {t: sum(c["type"] == t for c in g.constraints) for t in CONSTRAINT_TYPES},
                          "violated": [], "source": "generator", "generator": g.generator, "scene_file": g.key})


def scenerevis_tasks(g: Generated, n: int) -> list[Any]:
    """SceneReVis tasks of one generated scene: the scene itself for a room, one task per
    room for a house (SceneReVis judges rooms; the paper scored Holodeck's rooms so)."""
    from buildbench.harness import Task
    from buildbench.scenes.revis import write_revis

    scene = g.item.scene
    if not scene.rooms:
        # nothing to judge is the generator's failure, scored as one (not a row with the scene left out)
        room = room_key(g.room)
        return [Task(id=_task_id(g, n), suite="scenerevis",
                     inputs={"instruction": g.instruction, "initial_scene": None, "room_type": room},
                     target={"room_type": room},
                     metadata={"room": room, "generator": g.generator, "scene_file": g.key, "room_id": None})]
    tasks = []
    for k, room_rec in enumerate(scene.rooms):
        room = room_key((g.room if len(scene.rooms) == 1 else "") or room_rec.room_type)
        flat = write_revis(scene) if len(scene.rooms) == 1 else write_revis(scene, room_id=room_rec.id)
        task_id = _task_id(g, n) if len(scene.rooms) == 1 else f"{_task_id(g, n)}-{k}"
        tasks.append(Task(id=task_id, suite="scenerevis",
                          inputs={"instruction": g.instruction, "initial_scene": flat, "room_type": room},
                          target={"room_type": room},
                          metadata={"room": room, "generator": g.generator, "scene_file": g.key,
                                    "room_id": room_rec.id}))
    return tasks


def _manifest(config: Any, scenes: Sequence[Generated], source: dict[str, Any], n_tasks: int) -> dict[str, Any]:
    """``n_tasks``: the run's tasks (LEGO-Eval: one per scene; SceneReVis: one per room of a house), from
    which a report counts the episodes it expects."""
    from buildbench.harness.runner import versions

    return {"config": config.to_dict(), "versions": versions(), "created_unix": time.time(), "tasks": n_tasks,
            "generators": {**source, "names": sorted({g.generator for g in scenes})}}


async def _legoeval(scenes: Sequence[Generated], run_dir: Path, source: dict[str, Any], evaluator: str,
                    model: str | None, options: dict[str, Any]) -> int:
    from dataclasses import replace

    from buildbench.harness import Store
    from buildbench.harness.runner import RunConfig, build_model, execute_episode

    config = RunConfig(suite="legoeval", agent=evaluator, protocol="evaluate", model=model, options=options,
                       workers=0)
    chat = build_model(config) if model else None
    tasks = [legoeval_task(g, n) for n, g in enumerate(scenes)]
    with Store(run_dir) as store:
        store.write_manifest(_manifest(config, scenes, source, len(tasks)))
        for g, task in zip(scenes, tasks, strict=True):
            ep = await execute_episode(config, task, 0, store.artifact_root, chat)
            # the row is the generator's; the evaluator that judged it is the run's agent (manifest)
            store.add_episode(replace(ep, agent=g.generator, metadata={**ep.metadata, "evaluator": ep.agent}))
    return len(tasks)


async def _judge_record(model: Any, scene: dict[str, Any], instruction: str) -> dict[str, Any]:
    """A model evaluation judge's record of one scene, as the SceneReVis protocol keeps it:
    the scores, or the failure (never a score)."""
    from buildbench.suites.scenerevis.judge.evaluation import VisionEvalJudge, scores_record
    from buildbench.suites.scenerevis.judge.semantic import JudgeError
    from buildbench.suites.scenerevis.protocols import REPLY_KEEP
    from buildbench.suites.scenerevis.render import render_merged

    judge = VisionEvalJudge(model)
    t0 = time.perf_counter()
    try:
        image = render_merged(scene, seed=0, turn=0)
        record: dict[str, Any] = {**scores_record(await judge.evaluate(scene, instruction, image)), "status": "ok"}
    except JudgeError as exc:
        record = {"judge": judge.label, "comparable_with_paper": True, "status": "error", "error": str(exc)}
    record.update(latency_s=round(time.perf_counter() - t0, 4), reply=judge.last_reply[:REPLY_KEEP])
    return record


async def _scenerevis(scenes: Sequence[Generated], run_dir: Path, source: dict[str, Any], judge: str,
                      judge_model: Any | None) -> int:
    from buildbench.harness import Episode, Store
    from buildbench.harness.errors import AgentFailure
    from buildbench.harness.runner import RunConfig
    from buildbench.suites.scenerevis.options import RULE, SceneReVisOptions
    from buildbench.suites.scenerevis.outcome import SceneReVisOutcome
    from buildbench.suites.scenerevis.protocols import eval_judge_model
    from buildbench.suites.scenerevis.score import failure_metrics, score

    config = RunConfig(suite="scenerevis", agent="generated", protocol="generated", workers=0,
                       options={"eval_judge": judge})
    model = judge_model
    if model is None and judge != RULE:
        model = eval_judge_model(SceneReVisOptions.parse({"eval_judge": judge}, where="--judge"))
    tasks = [(g, task) for n, g in enumerate(scenes) for task in scenerevis_tasks(g, n)]
    try:
        with Store(run_dir) as store:
            store.write_manifest(_manifest(config, scenes, source, len(tasks)))
            for g, task in tasks:
                outcome: dict[str, Any] = {"instruction": g.instruction, "scene": task.inputs["initial_scene"]}
                if model is not None:
                    outcome["eval_judge"] = await _judge_record(model, outcome["scene"], g.instruction)
                elif judge != RULE:  # "none": no judge fields
                    outcome["eval_judge"] = {"judge": judge}
                ep = Episode(task_id=task.id, sample=0, suite="scenerevis", agent=g.generator,
                             protocol="generated", seed=0, outcome=outcome, metadata=dict(task.metadata))
                t0 = time.perf_counter()
                try:
                    if outcome["scene"] is None:
                        raise AgentFailure("the generated scene has no room to judge")
                    ep.metrics = score(task, SceneReVisOutcome.from_dict(outcome))
                except AgentFailure as exc:  # the generator's scene cannot be measured: a scored failure
                    ep.status, ep.error, ep.error_kind = "failed", str(exc), "agent"
                    ep.metrics = failure_metrics(task)
                ep.duration_s = time.perf_counter() - t0
                store.add_episode(ep)
    finally:
        if model is not None and judge_model is None:
            await model.aclose()
    return len(tasks)


def evaluate(folders: Sequence[Path], fmt: str, run_dir: Path, *, suites: Sequence[str] = SUITES,
             name: str | None = None, evaluator: str = "deterministic", model: str | None = None,
             legoeval_options: dict[str, Any] | None = None, options: ReadOptions | None = None,
             identify: bool = False, judge: str = "rule", judge_model: Any | None = None) -> dict[str, Path]:
    """Read every folder, then write ``run_dir/<suite>`` runs; returns suite -> run folder.
    With ``identify`` (the ``llm`` evaluator), also ``run_dir/legoeval-identify``: the same
    scenes judged on the constraints the evaluator identifies from each instruction, the
    twin of ``legoeval`` in Table 4 (``buildbench legoeval report RUN/legoeval
    RUN/legoeval-identify``). ``judge``: SceneReVis's evaluation judge, ``rule`` (offline, not
    comparable with the paper) or a model spec whose vision judge scores each scene's render
    (``judge_model``: that model already made, for tests).

    Raises:
        SceneFormatError: a bad input (nothing written); ValueError: bad arguments.
    """
    bad = [s for s in suites if s not in SUITES]
    if bad or not suites:
        raise ValueError(f"--suite: unknown {', '.join(bad) or 'none'} (known: {', '.join(SUITES)})")
    if identify and (evaluator != "llm" or "legoeval" not in suites):
        raise ValueError("--identify needs --evaluator llm (the pipeline that identifies constraints) and "
                         "the legoeval suite")
    if judge != "rule" and judge_model is None and "scenerevis" in suites:
        from buildbench.suites.scenerevis.options import SceneReVisOptions

        SceneReVisOptions.parse({"eval_judge": judge}, where="--judge")  # a malformed spec stops here, before any folder
    if name is not None and len(folders) != 1:
        raise ValueError("--name names one generator: give one folder (several take their folders' names)")
    scenes = [g for folder in folders for g in read_generator(folder, fmt, name, options)]
    names = [g.generator for g in scenes]
    if len(dict.fromkeys(names)) != len(folders):
        raise ValueError("two generator folders have the same name: rename one (the name is the row)")
    if run_dir.exists() and (not run_dir.is_dir() or any(run_dir.iterdir())):
        raise ValueError(f"--run-dir {run_dir}: exists and is not empty (choose a new folder)")
    made = not run_dir.exists()
    source = {"folders": [str(f) for f in folders], "format": fmt}
    out: dict[str, Path] = {}
    try:
        for suite in suites:
            out[suite] = run_dir / suite
            if suite == "legoeval":
                asyncio.run(_legoeval(scenes, out[suite], source, evaluator, model, dict(legoeval_options or {})))
                if identify:
                    out["legoeval-identify"] = run_dir / "legoeval-identify"
                    asyncio.run(_legoeval(scenes, out["legoeval-identify"], source, evaluator, model,
                                          {**(legoeval_options or {}), "constraints": "identify"}))
            else:
                asyncio.run(_scenerevis(scenes, out[suite], source, judge, judge_model))
    except BaseException:
        # a run cut short is not a run: leave nothing behind
        for folder in out.values():
            shutil.rmtree(folder, ignore_errors=True)
        if made:
            shutil.rmtree(run_dir, ignore_errors=True)
        raise
    return out


__all__ = ["evaluate", "read_generator", "constraints_of", "parse_document", "SUITES", "PROMPTS_FILE"]
