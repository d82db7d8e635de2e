"""Run oracle code the way the agent tool does, and make the result deterministic.

The agent tool (paper App. F; spec section 1.3) binds ``ifc``, ``ifcopenshell``, ``api``,
``util``, ``element_util``, ``guid``, ``result`` and ``commit()``. Ground truths are made
by running a task's ``oracle_code`` in exactly that namespace, so what the oracle agent
sends through the tool is what made M*.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ifcopenshell
import ifcopenshell.api
import ifcopenshell.guid
import ifcopenshell.util
import ifcopenshell.util.element
import ifcopenshell.util.placement
import ifcopenshell.util.unit
import numpy as np

from buildbench.suites.bimedit.check.edit import EditScore, score_edit
from buildbench.suites.bimedit.generate.builder import FIXED_TIMESTAMP
from buildbench.suites.bimedit.task_records import BimTask


def tool_namespace(model: ifcopenshell.file, commit: Callable[[], None]) -> dict[str, Any]:
    """The names the ``execute_ifc_code`` tool binds (spec section 1.3)."""
    return {"ifc": model, "ifcopenshell": ifcopenshell, "api": ifcopenshell.api, "util": ifcopenshell.util,
            "element_util": ifcopenshell.util.element, "guid": ifcopenshell.guid, "result": None,
            "commit": commit}


def run_oracle(code: str, model: ifcopenshell.file) -> ifcopenshell.file:
    """Execute ``code`` on ``model`` in the tool namespace (in place); ``commit()`` is a no-op here.

    Raises:
        RuntimeError: the code raised; the message names the failing exception.
    """
    namespace = tool_namespace(model, lambda: None)
    try:
        exec(compile(code, "<oracle>", "exec"), namespace)  # noqa: S102 - our own generated code
    except Exception as exc:
        raise RuntimeError(f"oracle code failed: {type(exc).__name__}: {exc}") from exc
    return model


def owner_dates(model: ifcopenshell.file) -> dict[int, tuple[Any, Any]]:
    """Creation and last-modified dates of every owner history, by entity id."""
    return {h.id(): (h.CreationDate, h.LastModifiedDate) for h in model.by_type("IfcOwnerHistory")}


def stabilise(model: ifcopenshell.file, before: set[str], seed: int,
              dates: dict[int, tuple[Any, Any]] | None = None) -> None:
    """Make an edited model byte-stable: seeded GlobalIds for new roots, sorted relations, fixed header time.

    ``ifcopenshell.api`` draws fresh random GlobalIds and collects related objects in sets,
    and stamps the owner histories it adds or touches (a model with a user, e.g. every
    IFC2X3 export) with the clock, so the same edit would otherwise give different bytes on
    every run. ``dates`` (from :func:`owner_dates` before the edit) says which stamps are new,
    and which owner histories the edit added (:func:`order_new_histories`).
    """
    if dates is not None:
        order_new_histories(model, dates)
    for hist in model.by_type("IfcOwnerHistory"):
        old = (dates or {}).get(hist.id())
        if old is None:
            hist.CreationDate = FIXED_TIMESTAMP
        if hist.LastModifiedDate is not None and (old is None or old[1] != hist.LastModifiedDate):
            hist.LastModifiedDate = FIXED_TIMESTAMP
    rng = np.random.default_rng([seed, 0x6E7])
    for ent in sorted(model.by_type("IfcRoot"), key=lambda e: e.id()):
        if ent.GlobalId not in before:
            ent.GlobalId = ifcopenshell.guid.compress(uuid.UUID(bytes=rng.bytes(16)).hex)
    for rel in model.by_type("IfcRelationship"):
        # by position: get_info builds a dict of every attribute, twice as slow here
        for i in range(len(rel)):
            value = rel[i]
            if isinstance(value, tuple) and len(value) > 1 and all(isinstance(v, ifcopenshell.entity_instance)
                                                                   for v in value):
                ordered = sorted(value, key=lambda e: e.id())
                # setting an aggregate to the order it has writes the same bytes; only relations
                # an edit touched are out of order (stabilise on the Duplex building: 55 -> 40 ms)
                if ordered != list(value):
                    setattr(rel, rel.attribute_name(i), ordered)
    model.header.file_name.time_stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(FIXED_TIMESTAMP))


def order_new_histories(model: ifcopenshell.file, dates: dict[int, tuple[Any, Any]]) -> None:
    """Give the owner histories an edit added (ids not in ``dates``) to their users in a fixed order.

    ``ifcopenshell.api`` copies a shared owner history for each relation it changes (e.g.
    ``root.remove_product`` taking an element out of a shared material and a shared type
    relation), in the order it walks the element's inverse set: IfcOpenShell hashes an entity
    by a number counting every entity the process has read, so that order, and with it which
    relation gets which new ``#id``, depended on the models the process opened before. Here
    the new histories, ordered by the smallest id of the entities that use them (the relations
    and elements themselves keep their ids), take the new ids in increasing order: each id
    gets the attribute values and the users of the history at its rank.
    """
    new = sorted((h for h in model.by_type("IfcOwnerHistory") if h.id() not in dates), key=lambda h: h.id())
    if len(new) < 2:
        return
    users = {h.id(): sorted((e for e in model.get_inverse(h) if e.is_a("IfcRoot")), key=lambda e: e.id())
             for h in new}
    # a history nobody uses (none is expected) keeps its rank after every used one, by its own id
    ranked = sorted(new, key=lambda h: (0, users[h.id()][0].id()) if users[h.id()] else (1, h.id()))
    if [h.id() for h in ranked] == [h.id() for h in new]:
        return
    values = {h.id(): [h[i] for i in range(len(h))] for h in new}
    for slot, source in zip(new, ranked, strict=True):
        for i, value in enumerate(values[source.id()]):
            slot[i] = value
        for user in users[source.id()]:
            user.OwnerHistory = slot


def apply_and_write(code: str, input_path: str | Path, out_path: str | Path, seed: int) -> ifcopenshell.file:
    """Open M0, run the oracle code, stabilise and write M*; returns the edited model."""
    model = ifcopenshell.open(str(input_path))
    before = {e.GlobalId for e in model.by_type("IfcRoot")}
    dates = owner_dates(model)
    run_oracle(code, model)
    stabilise(model, before, seed, dates)
    write_model(model, out_path)
    return model


def write_model(model: ifcopenshell.file, out_path: str | Path) -> None:
    """Write ``model`` as ``model.write`` does: an ``.ifc`` file from ``to_string``, the same bytes
    in about half the time on big models (0.22 s vs 0.39 s on the Duplex building); an archive
    or another format by ``model.write`` itself."""
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() != ".ifc":
        model.write(str(out))
        return
    out.write_bytes(model.to_string().encode())


def write_oracle_prediction(task: BimTask, out_path: str | Path) -> Path:
    """Run the task's oracle code on its M0 as the tool would, with ``commit()`` writing to ``out_path``."""
    model = ifcopenshell.open(task.input_ifc)
    out = Path(out_path)
    namespace = tool_namespace(model, lambda: write_model(model, out))
    exec(compile(task.oracle_code, task.task_id, "exec"), namespace)  # noqa: S102 - generated oracle code
    return out


def score_oracle(task: BimTask, out_dir: str | Path) -> EditScore:
    """The oracle's prediction for ``task`` (written under ``out_dir``) scored against the ground truth."""
    pred = write_oracle_prediction(task, Path(out_dir) / f"{task.task_id}.ifc")
    return score_edit(task.input_ifc, task.ground_truth_ifc, pred, task.score_spec())
