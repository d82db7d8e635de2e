"""Replay the released library's golden corpus (golden-dev.jsonl) and compare every answer.

Texts are compared exactly after normalising what the original printed as
floating-point noise: numbers inside ``[...]`` are compared within 0.011 and
``-0.0°`` reads as ``0.0°``. Overlap lines are compared as unordered pairs.
Our displayed Position follows the block itself; the original measured it
from the base face, so the comparison renders captions with that legacy rule
(installed by monkeypatching ``captions.block_center``).

Documented divergences (suite README) are recognised explicitly; after one
that changes the state, the rest of that sequence is not compared.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from buildbench.suites.buildarena.export import to_bsg
from buildbench.suites.buildarena.library import Workbench
from buildbench.suites.buildarena.library import captions as captions_module
from buildbench.suites.buildarena.library import collision as collision_module
from buildbench.suites.buildarena.library.geometry import face_center, face_normal, spec_of
from buildbench.suites.buildarena.model import Block, Machine, Rules

GOLDEN = Path(__file__).resolve().parents[3] / "shared" / "data" / "buildarena" / "golden-dev.jsonl"
pytestmark = pytest.mark.skipif(not GOLDEN.exists(), reason=f"golden corpus not present at {GOLDEN}")

_ARRAY = re.compile(r"\[([-+0-9.eE ,]+)\]")
_OVERLAP = re.compile(r"Overlapping detected between (<[^>]*>) and (<[^>]*>)$")


def _normalise(text: str) -> tuple[str, list[list[float]], frozenset[frozenset[str]]]:
    pairs = set()
    kept = []
    for line in text.split("\n"):
        m = _OVERLAP.match(line)
        if m:
            pairs.add(frozenset(m.groups()))
        else:
            kept.append(line)
    numbers: list[list[float]] = []

    def grab(m: re.Match[str]) -> str:
        numbers.append([float(x) for x in re.split(r"[ ,]+", m.group(1).strip()) if x])
        return "[#]"

    body = _ARRAY.sub(grab, "\n".join(kept)).replace("-0.0°", "0.0°").replace("-0°", "0°")
    return body, numbers, frozenset(pairs)


def same_text(ours: str, expected: str) -> bool:
    """Equal after normalisation (numbers within 0.011)."""
    a, na, pa = _normalise(ours)
    b, nb, pb = _normalise(expected)
    if a != b or pa != pb or len(na) != len(nb):
        return False
    return all(len(x) == len(y) and np.allclose(x, y, atol=0.011) for x, y in zip(na, nb, strict=True))


def _chunks(text: str) -> list[str]:
    return re.split(r"\n(?=\(.*\) <ID |<ID )", text)


def same_blocks_any_order(ours: str, expected: str) -> bool:
    """Equal block captions, listing order ignored (a failed twist/shift re-listed the block in the original)."""
    remaining = _chunks(expected)
    for chunk in _chunks(ours):
        match = next((c for c in remaining if same_text(chunk, c)), None)
        if match is None:
            return False
        remaining.remove(match)
    return not remaining


def install_legacy_position(bench: Workbench, monkeypatch: pytest.MonkeyPatch) -> dict[str, np.ndarray]:
    """Render Position as the original did: base face centre + offset along the base face normal."""
    cache: dict[str, np.ndarray] = {}
    true_center = captions_module.block_center

    def legacy(block: Block) -> np.ndarray:
        ref = block.attached_to if block.ends is None else block.ends[0]
        if ref is None:
            return true_center(block)
        base = bench.machine.blocks.get(ref.block)
        if base is None:  # the original kept the removed base's last face
            return cache.get(block.id, true_center(block))
        value = face_center(base, ref.face) + spec_of(block).center_offset * face_normal(base, ref.face)
        cache[block.id] = value
        return value

    monkeypatch.setattr(captions_module, "block_center", legacy)
    return cache


def _with_contact_rule(snapshot: dict, rules: Rules, call: dict, touching_overlaps: bool) -> str:
    """Re-run ``call`` on a copy of the pre-call machine with a looser or stricter contact rule.

    ``touching_overlaps=True`` treats colliders within 1e-3 units as overlapping,
    ``False`` requires a penetration deeper than 1e-3.
    """
    import fcl

    def collide(a: fcl.CollisionObject, b: fcl.CollisionObject) -> bool:
        if touching_overlaps:
            return fcl.distance(a, b, fcl.DistanceRequest(), fcl.DistanceResult()) < 1e-3 or fcl.collide(
                a, b, fcl.CollisionRequest(), fcl.CollisionResult()
            )
        res = fcl.CollisionResult()
        fcl.collide(a, b, fcl.CollisionRequest(num_max_contacts=1, enable_contact=True), res)
        return any(c.penetration_depth > 1e-3 for c in res.contacts)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(collision_module, "_collide", collide)
        copy = Workbench(machine=Machine.from_json(snapshot), rules=rules)
        return copy.call(call["op"], call["params"]).text


def _compare_sequence(record: dict, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    bench = Workbench(rules=Rules.released())
    install_legacy_position(bench, monkeypatch)
    tally: Counter[str] = Counter()
    for i, call in enumerate(record["calls"]):
        if call["op"] == "to_file":  # persistence, not a tool; checked by the export tests
            continue
        snapshot = bench.machine.to_json()
        out = bench.call(call["op"], call["params"])
        for block in list(bench.machine.blocks.values()):
            captions_module.block_center(block)  # keep the legacy cache current
        expected = call.get("result")
        where = f"seed {record['seed']} call {i} {call['op']} {call['params']}"
        params = call["params"]
        if expected is None:
            tally["exception in original"] += 1
            crash = call["exception"]
            if call["op"] == "remove_block":  # the connector was removed before the original raised
                assert out.ok and out.text.startswith("You have successfully removed"), where
            elif call["op"] == "twist_block":
                assert out.text.endswith(
                    "is not attached to any face and can not be twisted, please try again."
                ), where
            else:
                assert call["op"] == "connect_blocks" and "not available" in out.text, (where, crash)
        elif same_text(out.text, expected):
            tally["exact"] += 1
        elif call["op"] in ("get_machine_summary", "start") and same_blocks_any_order(out.text, expected):
            tally["listing order"] += 1
        elif call["op"] == "remove_block" and str(params.get("block_id")) == "0":
            assert out.text == "Specified block 0 not found, please try again.", where
            tally["remove id 0"] += 1
        elif call["op"] == "connect_blocks" and params.get("connector") == "Ballast":
            assert out.text.startswith("Connector Ballast not available"), where
            tally["ballast connector"] += 1
            return tally  # the original placed (or half-removed) a Ballast as a connector; states differ from here
        elif record["seed"] == "intro_notebook" and call["op"] in (
            "change_control_key",
            "review_powered_blocks",
            "review_control_sequence",
        ):
            tally["shared key list"] += 1
        elif "Overlapping" in expected + out.text and any(
            same_text(_with_contact_rule(snapshot, bench.rules, call, flag), expected)
            for flag in (True, False)
        ):
            tally["touching colliders"] += 1
            return tally
        else:
            pytest.fail(f"{where}\n--- ours\n{out.text}\n--- original\n{expected}")
        if set(bench.machine.blocks) != set(call["ids_after"]):
            tally["state diverged"] += 1
            return tally
    _compare_final(bench, record["final"], record["seed"])
    _compare_bsg(bench, record["final"], record["seed"])
    tally["final state"] += 1
    return tally


def _compare_final(bench: Workbench, final: dict, seed: str) -> None:
    ours = bench.machine.blocks
    assert set(ours) == {b["key"] for b in final["blocks"]}, seed
    for raw in final["blocks"]:
        block = ours[raw["key"]]
        assert block.type == raw["name"], seed
        assert np.allclose(block.position, raw["position_virtual"], atol=1e-6), (seed, raw["key"])
        assert np.allclose(block.rotation, raw["rotation_matrix"], atol=1e-6), (seed, raw["key"])
        if block.ends is None:
            free = {label for label, f in raw["faces"].items() if f["sticky"]}
            ours_free = {f.label for f in spec_of(block).faces if f.label not in block.links}
            assert ours_free == free, (seed, raw["key"], ours_free, free)


def _bsg_blocks(xml: str) -> list[tuple]:
    """(game id, position, rotation with w >= 0, connector end-position) per block, rounded, sorted."""
    rows = []
    # Only the <Blocks> section: the original's embedded Lua text is not always valid XML.
    section = xml[xml.index("<Blocks>") : xml.index("</Blocks>") + len("</Blocks>")]
    for block in ET.fromstring(section).iter("Block"):
        pos = block.find("Transform/Position")
        rot = block.find("Transform/Rotation")
        q = np.array([float(rot.get(k)) for k in "wxyz"])
        lead = next(v for v in q if abs(v) > 1e-6)  # q and -q are the same rotation
        q = q if lead > 0 else -q
        end = block.find("Data/Vector3[@key='end-position']")
        end_xyz = None
        if end is not None:  # the original wrote numpy 2 reprs such as np.float64(0.0)
            texts = [end.find(k).text.replace("np.float64(", "").rstrip(")") for k in "XYZ"]
            end_xyz = tuple(round(float(t), 5) + 0.0 for t in texts)
        xyz = tuple(round(float(pos.get(k)), 5) + 0.0 for k in "xyz")
        rows.append((block.get("id"), xyz, tuple(round(float(v), 5) + 0.0 for v in q), end_xyz))
    return sorted(rows)


def _compare_bsg(bench: Workbench, final: dict, seed: str) -> None:
    if "<Blocks>" not in final.get("bsg_xml", ""):
        return
    assert _bsg_blocks(to_bsg(bench.machine)) == _bsg_blocks(final["bsg_xml"]), seed


def _records() -> list[dict]:
    if not GOLDEN.exists():
        return []
    return [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]


KNOWN_TOUCHING = {"7", "38"}
"""Sequences where the original's mesh test disagreed with itself on touching colliders."""


@pytest.mark.parametrize("record", _records(), ids=lambda r: str(r["seed"]))
def test_golden_sequence(record: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    tally = _compare_sequence(record, monkeypatch)
    seed = str(record["seed"])
    assert tally["exact"] > 0
    assert tally["touching colliders"] == 0 or seed in KNOWN_TOUCHING, tally
    assert tally["final state"] == 1 or tally["ballast connector"] or seed in KNOWN_TOUCHING, tally
