"""Generated rooms, the ms-swift record format, instructions, reasoning, the chain scorer
and the ``reverse`` command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from buildbench.suites.scenerevis.generate.assets import ESSENTIALS, category_of
from buildbench.suites.scenerevis.generate.chain_filter import grade_chain, keep_best
from buildbench.suites.scenerevis.generate.diagnose import collisions, outside, passes_source_filter
from buildbench.suites.scenerevis.generate.flat import SceneRecordError, check_scene, room_area_m2
from buildbench.suites.scenerevis.generate.instructions import make_instruction
from buildbench.suites.scenerevis.generate.pipeline import ReverseOptions, chains_for_scene, generate_chains
from buildbench.suites.scenerevis.generate.reasoning import TEMPLATES, turn_reasoning
from buildbench.suites.scenerevis.generate.reverse import ReverseChain, Turn, chain_rng, reverse_chain
from buildbench.suites.scenerevis.generate.rooms import ROOM_TYPES, generate_rooms

ARGS = {"add_object": {"object_description", "position", "rotation", "size"}, "remove_object": {"jid"},
        "move_object": {"jid", "new_position"}, "rotate_object": {"jid", "new_rotation"},
        "scale_object": {"jid", "new_size"}, "replace_object": {"jid_to_replace", "new_object_description"},
        "terminate": {"reason"}}


@pytest.fixture(scope="module")
def rooms() -> list[dict]:
    return generate_rooms(21, seed=2)


def test_rooms_are_deterministic_plausible_and_filtered(rooms: list[dict]) -> None:
    assert json.dumps(rooms[:5]) == json.dumps(generate_rooms(5, seed=2))
    assert json.dumps(rooms[:5]) != json.dumps(generate_rooms(5, seed=3))
    assert Counter(r["room_type"] for r in rooms) == dict.fromkeys(ROOM_TYPES, 3)
    for r in rooms:
        assert passes_source_filter(r)
        assert not collisions(r) and not outside(r), r["room_id"]
        assert 5 <= len(r["bounds_bottom"]) + 1 <= 7  # rectangles and L-shapes
        assert 7.0 <= room_area_m2(r) <= 35.0
        needs = ESSENTIALS[r["room_type"]]
        if needs:  # the first core piece always fits in a fresh room
            first = next(iter(needs.values()))
            assert any(w in o["desc"].lower() for o in r["objects"] for w in first), r["room_id"]


def test_bad_scene_records_name_the_field() -> None:
    with pytest.raises(SceneRecordError, match=r"l3\.objects\[0\]\.size"):
        check_scene({"bounds_top": [[0, 2, 0]] * 3, "bounds_bottom": [[0, 0, 0], [1, 0, 0], [0, 0, 1]],
                     "objects": [{"desc": "a", "size": [1, float("nan"), 1], "pos": [0, 0, 0]}]}, "l3")
    with pytest.raises(SceneRecordError, match="bounds_top"):
        check_scene({"bounds_bottom": [], "objects": []}, "x")


def _content_turns(rec: dict) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in rec["messages"]]


def test_records_follow_the_protocol(rooms: list[dict], tmp_path: Path) -> None:
    opts = ReverseOptions(seed=1, candidates=3, keep=2, images_dir=tmp_path / "images")
    records, stats = chains_for_scene(rooms[0], 0, opts)
    assert len(records) == 2 and stats.images == sum(len(r["images"]) for r in records)
    for rec in records:
        turns = _content_turns(rec)
        assert [r for r, _ in turns[:3]] == ["system", "user", "assistant"]
        assert "<image>" not in turns[1][1]  # turn 0 sees the request alone
        assert turns[2][1].startswith("<create_scene>\n```json\n")
        created = json.loads(re.search(r"```json\n(.*)\n```", turns[2][1], re.S).group(1))
        assert created["objects"] == []
        rest = turns[3:]
        assert [r for r, _ in rest] == ["user", "assistant"] * (len(rest) // 2)
        assert sum(c.count("<image>") for _, c in turns) == len(rec["images"]) == len(rest) // 2
        for path in rec["images"]:
            assert (tmp_path / path).stat().st_size > 1000
        for role, content in rest:
            if role == "user":
                block = re.search(r"<current_scene>\n```json\n(.*)\n```\n</current_scene>$", content, re.S)
                assert block and isinstance(json.loads(block.group(1))["objects"], list)
                continue
            assert re.fullmatch(r"<think>\n.+\n</think>\n\n<tool_calls>\n\[.*\]\n</tool_calls>", content, re.S)
            calls = json.loads(content.split("<tool_calls>\n")[1].split("\n</tool_calls>")[0])
            for k, call in enumerate(calls):
                assert call["id"] == f"tool_{k + 1}" and set(call["arguments"]) == ARGS[call["name"]]
        assert json.loads(rest[-1][1].split("<tool_calls>\n")[1].split("\n</tool_calls>")[0])[0]["name"] == "terminate"
        assert rec["metadata"]["total_turns"] == len(rest) // 2 + 1


def test_instructions_mix_and_truthfulness(rooms: list[dict]) -> None:
    made = [make_instruction(r, np.random.default_rng([0, i, k])) for i, r in enumerate(rooms) for k in range(20)]
    kinds = Counter(m.kind for m in made)
    assert 0.4 < kinds["brief"] / len(made) < 0.6
    assert all(len(m.text.split()) <= 20 for m in made if m.kind == "brief")
    styles = Counter(m.style for m in made if m.kind == "brief")
    assert styles["basic requirements"] > styles["simple goal"] * 0.9
    assert len({m.style for m in made if m.kind == "detailed"}) == 6
    for i, r in enumerate(rooms):
        inst = make_instruction(r, np.random.default_rng([1, i]))
        assert r["room_type"] in inst.text


def test_reasoning_names_each_call_and_uses_all_templates(rooms: list[dict]) -> None:
    used = set()
    for i, room in enumerate(rooms[:7]):
        chain = reverse_chain(room, chain_rng(0, i, 0))
        for k, turn in enumerate(chain.turns):
            rng = np.random.default_rng([i, k])
            template = np.random.default_rng([i, k]).integers(len(TEMPLATES))
            used.add(int(template))
            text = turn_reasoning("Furnish it.", turn.before, turn.calls, turn.after, rng)
            for call in turn.calls:
                handle = call["arguments"].get("jid", call["arguments"].get("jid_to_replace"))
                if handle is not None and any(o["id"] == handle for o in turn.before["objects"]):
                    assert handle in text
                assert call["name"] in text
    assert used == set(range(len(TEMPLATES)))


def test_reasoning_reports_the_bugs_it_sees() -> None:
    room = {"room_type": "bedroom", "room_id": "r", "objects": [],
            "bounds_bottom": [[-2, 0, -2], [2, 0, -2], [2, 0, 2], [-2, 0, 2]],
            "bounds_top": [[-2, 2.6, -2], [2, 2.6, -2], [2, 2.6, 2], [-2, 2.6, 2]]}
    bed = {"id": "obj_1", "desc": "Modern bed", "size": [1.6, 0.5, 2.0], "pos": [0.0, 0.0, 0.0],
           "rot": [0, 0, 0, 1], "jid": "x"}
    chair = {**bed, "id": "obj_2", "desc": "Oak chair", "size": [0.5, 0.9, 0.5], "pos": [0.3, 0.0, 0.2]}
    before = {**room, "objects": [bed, chair]}
    call = {"id": "tool_1", "name": "move_object", "arguments": {"jid": "obj_2", "new_position": [1.5, 0.0, 1.5]}}
    text = turn_reasoning("A bedroom", before, [call], before, np.random.default_rng(3))
    assert "overlap" in text and "obj_2" in text and "wardrobe" in text


def _chain(volumes: list[float]) -> ReverseChain:
    source = {"room_type": "office", "room_id": "r", "objects": [],
              "bounds_bottom": [[-2, 0, -2], [2, 0, -2], [2, 0, 2], [-2, 0, 2]],
              "bounds_top": [[-2, 2.6, -2], [2, 2.6, -2], [2, 2.6, 2], [-2, 2.6, 2]]}
    turns = []
    for v in volumes:
        call = {"id": "tool_1", "name": "add_object", "arguments": {
            "object_description": "box", "position": [0, 0, 0], "rotation": [0, 0, 0, 1], "size": [v, 1.0, 1.0]}}
        turns.append(Turn(source, [call], source))
    return ReverseChain(source, turns, len(turns))


def test_scorer_prefers_coarse_to_fine() -> None:
    good, bad = _chain([3.0, 2.0, 1.0, 0.5]), _chain([0.5, 1.0, 2.0, 3.0])
    assert grade_chain(good).coherence > grade_chain(bad).coherence
    kept = keep_best([bad, good], 1)
    assert kept[0][0] is good and 0 <= kept[0][1].overall <= 100


def test_generate_chains_is_independent_of_workers(rooms: list[dict], tmp_path: Path) -> None:
    opts = ReverseOptions(seed=8, candidates=3, keep=2)
    one = generate_chains(rooms[:6], tmp_path / "a.jsonl", opts, workers=1)
    two = generate_chains(rooms[:6], tmp_path / "b.jsonl", opts, workers=2)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert one.to_dict() == two.to_dict() and one.chains == 12


def _buildbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "buildbench", "scenerevis", *args],
                          capture_output=True, text=True, timeout=300)


def test_reverse_command(rooms: list[dict], tmp_path: Path) -> None:
    src = tmp_path / "rooms.jsonl"
    src.write_text("".join(json.dumps({"scene": r}) + "\n" for r in rooms[:4]))
    out = tmp_path / "out"
    res = _buildbench("reverse", str(src), "--out", str(out), "--seed", "2", "--no-images",
                      "--candidates", "3", "--workers", "1", "--parquet")
    assert res.returncode == 0, res.stderr
    lines = (out / "chains.jsonl").read_text().splitlines()
    assert len(lines) == 12 and json.loads((out / "summary.json").read_text())["verl_rows"] == 12
    assert all(json.loads(line)["images"] == [] for line in lines)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"scene": rooms[0]}) + "\n{not json\n")
    res = _buildbench("reverse", str(bad), "--out", str(tmp_path / "o2"), "--no-images")
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1].startswith("error:") and "bad.jsonl:2" in res.stderr
    assert category_of("A walnut bedside table with one drawer") == "nightstand"


def test_scene_text_matches_the_environment(rooms: list[dict]) -> None:
    from buildbench.suites.scenerevis import env
    from buildbench.suites.scenerevis.generate.conversation import scene_block, scene_json

    odd = {"room_type": "", "objects": [], "nested": {"a": [1, "x", 2.5e-07], "b": {}, "c": [[1, 2], []]},
           "desc": 'quote " and ünïcode', "flag": True, "none": None}
    for scene in [*rooms, odd]:
        assert scene_json(scene) == env.scene_json(scene)
        assert scene_block(scene) == env.scene_block(scene)


def test_model_written_text_and_its_fallback(rooms: list[dict]) -> None:
    from buildbench.llm import ScriptedChat
    from buildbench.suites.scenerevis.generate.writer import TextWriter

    records, _ = chains_for_scene(rooms[1], 1, ReverseOptions(seed=2, candidates=1, keep=1, text_model="scripted"))
    rec = records[0]
    thinks = [m["content"] for m in rec["messages"] if m["role"] == "assistant" and "<think>" in m["content"]]
    # the scripted model echoes its prompt: the text came from the model, the calls did not
    assert all("The edits this turn makes" in t for t in thinks[:-1])
    assert rec["metadata"]["text_source"].startswith("model scripted")
    assert rec["metadata"]["global_user_instruction"].startswith("Rewrite the room request")
    failing = TextWriter("scripted")
    failing._model = ScriptedChat([])  # a model whose every call errors
    assert failing.reasoning("r", rooms[0], [], "template text") == "template text"
    assert failing.failures and "1 failed call" in failing.source


def test_grouped_scenes_are_read_as_flat(rooms: list[dict]) -> None:
    room = rooms[0]
    half = len(room["objects"]) // 2
    grouped = {"room_type": room["room_type"], "room_id": room["room_id"],
               "room_envelope": {"bounds_top": room["bounds_top"], "bounds_bottom": room["bounds_bottom"]},
               "groups": [{"group_name": "main_group", "objects": room["objects"][:half]},
                          {"group_name": "rest", "objects": room["objects"][half:]}]}
    assert check_scene(grouped, "g") == check_scene(room, "f")
