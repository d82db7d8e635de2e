"""The ``degraded`` calibration agent: the task's reference edit, corrupted in a seeded, nested
fraction ``-o degrade=FRACTION`` of its parts (see :mod:`buildbench.harness.degrade`), sent as
code through the env's ``execute_ifc_code`` tool like any agent's.

The parts are, for a delete, each target the reference removes (a corrupted one is left in the
model: part of the edit skipped); for a create or an update, each element the edit creates or
changes times three aspects — its placement (moved 0.5-1.5 m in plan), its body's extrusion
(resized by 1.5-2x) and its name (a wrong attribute value). The code draws the parts with
Python's ``random`` seeded by the episode seed, so the corruption is reproducible.
"""

from __future__ import annotations

from typing import Any

from buildbench.harness import Agent, Task
from buildbench.harness.degrade import SeededAgent
from buildbench.harness.errors import ConfigError

from .agents import CodeAgent, _with_commit
from .options import BimEditOptions
from .tasks import from_harness

#: Runs before the reference edit: which parts exist and which are corrupted; for a delete, the
#: corrupted targets are kept by making ``remove_product`` pass them over.
_BEFORE = '''
import random as _dg_random
_dg_rng = _dg_random.Random({seed})
_dg_before = {{p.GlobalId for p in ifc.by_type("IfcProduct")}}


def _dg_choose(n):
    order = list(range(n))
    _dg_rng.shuffle(order)
    draws = [(_dg_rng.random(), _dg_rng.random()) for _ in range(n)]
    return {{i: draws[i] for i in order[:int({fraction} * n + 0.5)]}}


if {delete}:
    _dg_targets = sorted(g for g in {targets!r} if g in _dg_before)
    _dg_keep = {{_dg_targets[i] for i in _dg_choose(len(_dg_targets))}}
    _dg_remove = api.root.remove_product

    def _dg_remove_unless_kept(file, product, *args, **kwargs):
        if product.GlobalId in _dg_keep:
            return None
        return _dg_remove(file, product, *args, **kwargs)

    api.root.remove_product = _dg_remove_unless_kept
'''

#: Runs after the reference edit (and its commit): corrupts the chosen aspects and commits again.
_AFTER = '''
import math as _dg_math
import numpy as _dg_np
import ifcopenshell.util.placement as _dg_placement
import ifcopenshell.util.unit as _dg_unit

if {delete}:
    api.root.remove_product = _dg_remove
else:
    _dg_now = {{p.GlobalId for p in ifc.by_type("IfcProduct")}}
    _dg_edited = sorted(_dg_now - _dg_before) if {create} else sorted(g for g in {targets!r} if g in _dg_now)
    _dg_scale = _dg_unit.calculate_unit_scale(ifc)
    for _dg_k, (_dg_u, _dg_v) in sorted(_dg_choose(3 * len(_dg_edited)).items()):
        _dg_el = ifc.by_guid(_dg_edited[_dg_k // 3])
        _dg_aspect = _dg_k % 3
        if _dg_aspect == 0 and _dg_el.ObjectPlacement is not None:
            _dg_m = _dg_np.array(_dg_placement.get_local_placement(_dg_el.ObjectPlacement))
            _dg_d = 0.5 + _dg_v
            _dg_m[:3, 3] = _dg_m[:3, 3] * _dg_scale + _dg_np.array(
                (_dg_d * _dg_math.cos(6.2832 * _dg_u), _dg_d * _dg_math.sin(6.2832 * _dg_u), 0.0))
            api.geometry.edit_object_placement(ifc, product=_dg_el, matrix=_dg_m, is_si=True)
        elif _dg_aspect == 1 and _dg_el.Representation is not None:
            for _dg_rep in _dg_el.Representation.Representations:
                for _dg_item in _dg_rep.Items:
                    if _dg_item.is_a("IfcExtrudedAreaSolid"):
                        _dg_item.Depth = _dg_item.Depth * (1.5 + 0.5 * _dg_v)
        elif _dg_aspect == 2:
            _dg_el.Name = "degraded " + _dg_el.is_a()
commit()
'''


def degraded_code(oracle_code: str, *, operation: str, targets: tuple[str, ...], fraction: float, seed: int) -> str:
    """The reference ``oracle_code`` wrapped so that ``fraction`` of its parts go wrong."""
    fill = {"seed": int(seed), "fraction": float(fraction), "targets": sorted(targets),
            "delete": operation == "delete", "create": operation == "create"}
    return _BEFORE.format(**fill) + "\n" + _with_commit(oracle_code) + _AFTER.format(**fill)


def degraded(task: Task, model: Any, options: BimEditOptions) -> Agent:
    bim = from_harness(task)
    if not bim.oracle_code.strip():
        raise ConfigError(f"task {task.id} has no oracle_code")
    fraction = options.degrade

    def build(seed: int) -> Agent:
        code = degraded_code(bim.oracle_code, operation=bim.operation, targets=bim.target_guids,
                             fraction=fraction, seed=seed)
        return CodeAgent([code], name="degraded")

    return SeededAgent(build)
