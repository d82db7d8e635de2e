"""Machine persistence: the replayable history JSON and the Besiege ``.bsg`` XML (spec 1.4).

The history JSON (a list of ``{"op", "params", "result"}``) is the canonical
machine representation; ``load_history`` rebuilds a machine from it. The
``.bsg`` file is for users who own Besiege: block positions are the attach
face centres in the virtual frame, rotations quaternions ``x y z w``,
connector end points in the connector's local frame as fixed when connected
(start/end rotations are our reading of the released exporter, unverified). Unlike the released
exporter we write no ``None`` data for blocks without settings. The embedded
Lua script (``besiege.lua_script``) presses the machine's control sequence,
ramps a Ballast's mass and logs every block at 25 Hz, so a user who owns the
game can compare its trajectory with ours. The file cannot be validated
without the game.
"""

from __future__ import annotations

import json
import math
import uuid
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from buildbench.jsonio import parse_json

from .besiege import CargoRamp, TrackedBlock, lua_script
from .histories import valid_entries
from .library.bench import replay_refusal
from .library.frames import matrix_to_quat
from .library.geometry import face_normal, spec_of
from .library.released.convert import ReleasedStageBench, rebuild_released
from .library.workbench import Workbench
from .model import STARTING_BLOCK, Block, HistoryEntry, Machine, Rules


def history_json(machine: Machine) -> str:
    """The replayable history as JSON text."""
    return json.dumps(
        [{"op": h.op, "params": h.params, "result": h.result} for h in machine.history],
        indent=2,
        ensure_ascii=False,
    )


def _history_entries(text: str, rules: Rules) -> list[tuple[int, HistoryEntry]]:
    """The state-changing calls of a history file: the valid-action list, or a full-action one
    (queries, ``failed`` marks and the calls they mark dropped, see ``trajectories.records``);
    2.0's object holding the list under ``operation_history``/``operations`` is read too. Each
    call comes with its index in the file."""
    try:
        raw = parse_json(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"history is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from exc
    if isinstance(raw, dict) and ("operation_history" in raw or "operations" in raw):
        raw = raw.get("operation_history", raw.get("operations"))
    check_history(raw)
    # Every block costs at least one call; a few calls per block (moves, rotations, wiring) is
    # generous, and bounds the replay of a hostile file.
    max_calls = 4 * rules.max_blocks
    if len(raw) > max_calls:
        raise ValueError(f"history has {len(raw)} calls, over the limit of {max_calls}")
    at = {id(e): k for k, e in enumerate(raw)}  # a full history's calls are named by their place in it
    return [(at[id(e)], HistoryEntry(str(e["op"]), dict(e.get("params") or {}), str(e.get("result") or "")))
            for e in valid_entries(raw)]


def check_history(raw: Any, what: str = "history") -> None:
    """Raise ``ValueError`` unless ``raw`` is a list of ``{"op": name, "params": object}``
    entries (``what`` names the list in the message: an outcome holds several)."""
    if not isinstance(raw, list):
        raise ValueError(f"{what} must be a JSON list of {{'op', 'params', 'result'}} objects, got {_kind(raw)}")
    for k, entry in enumerate(raw):
        if not isinstance(entry, dict) or not isinstance(entry.get("op"), str) or not entry["op"].strip():
            got = f"is {_kind(entry)}" if not isinstance(entry, dict) else f"has 'op' {entry.get('op')!r}"
            raise ValueError(f"{what} must be a JSON list of {{'op', 'params', 'result'}} objects with a "
                             f"non-empty string 'op': call {k} {got}")
        if entry.get("params") is not None and not isinstance(entry["params"], dict):
            raise ValueError(f"{what} call {k} ({entry['op']}): 'params' must be an object of named "
                             f"parameters, got {_kind(entry['params'])}")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _replay_all(bench: Any, numbered: list[tuple[int, HistoryEntry]], released: bool) -> None:
    """Replay the calls on ``bench``; a call the library refuses is an error naming it: a
    machine file's history holds only calls that succeeded, so skipping one would build
    another machine than the file's (every later call on that block would fail too)."""
    entries = [entry for _, entry in numbered]
    for n, (k, entry) in enumerate(numbered):
        outcome = bench.call(entry.op, dict(entry.params))
        if outcome.ok:
            continue
        hint = ""
        if entry.op == "add_machine":
            hint = " (an assembly's history replays only with its saved machines, which a file does not hold)"
        elif not released and rebuild_released(entries[: n + 1]).session.log[-1].ok:
            hint = " (the original library accepted it: --profile released replays the file as it did)"
        raise ValueError(replay_refusal(k, entry.op, outcome.text) + hint)


def load_history(text: str, rules: Rules | None = None) -> Machine:
    """Rebuild a machine from history JSON text.

    Raises:
        ValueError: When the text is not a list of ``{"op", "params"}`` objects, or a
            state-changing call in it fails on replay (named with its index).
    """
    rules = rules or Rules()
    entries = _history_entries(text, rules)
    bench = Workbench(machine=Machine(is_assembly=bool(entries) and entries[0][1].op == "add_machine"), rules=rules)
    _replay_all(bench, entries, released=False)
    return bench.machine


def load_released_history(text: str) -> Machine:
    """Rebuild a machine from history JSON text with the released library profile (the original's answers).

    Raises:
        ValueError: As :func:`load_history`.
    """
    bench = ReleasedStageBench()
    _replay_all(bench, _history_entries(text, Rules()), released=True)
    return bench.machine


def _euler_degrees(rot: np.ndarray) -> tuple[float, float, float]:
    # Unity applies Z, then X, then Y; recover those angles from the matrix.
    x = math.degrees(math.asin(max(-1.0, min(1.0, -rot[1, 2]))))
    y = math.degrees(math.atan2(rot[0, 2], rot[2, 2]))
    z = math.degrees(math.atan2(rot[1, 0], rot[1, 1]))
    return (round(x, 6) + 0.0, round(y, 6) + 0.0, round(z, 6) + 0.0)


def _normal_euler(normal: np.ndarray) -> tuple[float, float, float]:
    from .library.frames import shortest_arc

    return _euler_degrees(shortest_arc(np.array([0.0, 0.0, 1.0]), normal))


def _fill(template: str, values: dict[str, Any]) -> str:
    out = template
    for key, value in values.items():
        out = out.replace("{" + key + "}", str(value))
    return out


def _keys_xml(keys: list[str]) -> str:
    return "".join(f"<String>{escape(k)}</String>" for k in keys)


def _end_rotations(
    machine: Machine, block: Block
) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """Euler angles of the two joined faces' normals in the connector frame (zero when an end is gone)."""
    angles = []
    for ref in block.ends or ():
        other = machine.joined_block(block, ref)
        if other is None:
            angles.append((0.0, 0.0, 0.0))
        else:
            angles.append(_normal_euler(block.rotation.T @ face_normal(other, ref.face)))
    return angles[0], angles[1]


def _block_data(machine: Machine, block: Block) -> str:
    spec = spec_of(block)
    values: dict[str, Any] = {a: _keys_xml(block.keys.get(a, [])) for a in spec.actions}
    values["flipped"] = str(block.flipped)
    if block.ends is not None and block.span is not None:
        end = block.span
        values |= {"end_x": end[0], "end_y": end[1], "end_z": end[2]}
        start_rot, end_rot = _end_rotations(machine, block)
        values |= {"start_r_x": start_rot[0], "start_r_y": start_rot[1], "start_r_z": start_rot[2]}
        values |= {"end_r_x": end_rot[0], "end_r_y": end_rot[1], "end_r_z": end_rot[2]}
    return _fill(spec.data_template, values).strip()


def _lua_data(machine: Machine, ref_keys: dict[str, str], cargo_mass: tuple[float, float]) -> list[str]:
    tracked = [TrackedBlock("Ballast" if b.type == "Ballast" else b.id,
                            None if b.type == STARTING_BLOCK else ref_keys[b.id], b.type)
               for b in machine.blocks.values() if b.ends is None]
    ballast = next((b for b in machine.blocks.values() if b.type == "Ballast"), None)
    cargo = None if ballast is None else CargoRamp(ref_keys[ballast.id], *cargo_mass)
    script = lua_script(machine.control_sequence, tracked, cargo)
    return [
        "    <Data>",
        '        <StringArray key="lua_files">LuaRoot/main.lua</StringArray>',
        f'        <StringArray key="lua_data">{escape(script)}</StringArray>',
        '        <StringArray key="lua_modules_names">default</StringArray>',
        '        <StringArray key="lua_modules_paths">LuaRoot/main.lua</StringArray>',
        '        <Boolean key="lua">True</Boolean>',
        '        <StringArray key="requiredMods" />',
        "    </Data>",
    ]


def to_bsg(machine: Machine, name: str = "machine", seed: int = 0, *, lua: bool = True,
           cargo_mass: tuple[float, float] = (50.0, 2.0)) -> str:
    """Besiege machine XML; ``seed`` makes the block guids reproducible.

    Args:
        lua: Embed the control and logging script (Lua Scripting Mod).
        cargo_mass: A Ballast's final mass and ramp time in seconds (Support: 1500, 15).
    """
    rng = np.random.default_rng(seed)
    blocks = sorted(machine.blocks.values(), key=lambda b: b.type != STARTING_BLOCK)
    guids = {b.id: str(uuid.UUID(bytes=rng.bytes(16), version=4)) for b in blocks}
    ref_keys = {b.id: spec_of(b).name.replace(" ", "") + "_" + guids[b.id][:8] for b in blocks}
    lines = [
        '<?xml version="1.0" encoding="utf-8"?>',
        "<!--Besiege machine save file.-->",
        f'<Machine version="1" bsgVersion="1.4" name={quoteattr(name)}>',
        "    <Global>",
        '        <Position x="0" y="5" z="0" />',
        '        <Rotation x="0" y="0" z="0" w="1" />',
        "    </Global>",
        *(_lua_data(machine, ref_keys, cargo_mass) if lua else ["    <Data />"]),
        "    <Blocks>",
    ]
    for block in blocks:
        spec = spec_of(block)
        guid = guids[block.id]
        w, x, y, z = matrix_to_quat(block.rotation)
        px, py, pz = (float(v) for v in block.position)
        sx, sy, sz = spec.scale
        data = _block_data(machine, block)
        ref_key = ref_keys[block.id]
        lines += [
            f'        <Block id="{spec.game_id}" guid="{guid}">',
            "            <Transform>",
            f'                <Position x="{px!r}" y="{py!r}" z="{pz!r}" />',
            f'                <Rotation x="{x!r}" y="{y!r}" z="{z!r}" w="{w!r}" />',
            f'                <Scale x="{sx!r}" y="{sy!r}" z="{sz!r}" />',
            "            </Transform>",
            "            <Data>",
            *([f"                {data}"] if data else []),
            '                <String key="bmt-lua_module">default</String>',
            f'                <String key="bmt-lua_ref_key">{ref_key}</String>',
            "            </Data>",
            "        </Block>",
        ]
    lines += ["    </Blocks>", "</Machine>", ""]
    return "\n".join(lines)
