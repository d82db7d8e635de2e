"""``buildbench scenerevis``: help, the env commands, one-line errors with exit status 2."""

from __future__ import annotations

import json

import pytest

from buildbench.cli import main

ROOM = {"room_type": "bedroom", "room_id": "B-1",
        "bounds_bottom": [[-2, 0, 2], [2, 0, 2], [2, 0, -2], [-2, 0, -2]],
        "bounds_top": [[-2, 2.6, 2], [2, 2.6, 2], [2, 2.6, -2], [-2, 2.6, -2]],
        "objects": [{"id": "obj_1", "desc": "Queen bed", "size": [1.6, 0.5, 2.0], "pos": [0, 0, 0],
                     "rot": [0, 0, 0, 1], "jid": "bed"}]}


def test_help_lists_every_command(capsys):
    assert main(["scenerevis", "--help"]) == 0
    out = capsys.readouterr().out
    for command in ("apply", "render", "retrieve", "metrics", "reverse", "export", "rooms", "goals"):
        assert command in out, command


def test_apply_reports_and_writes_the_edit(tmp_path, capsys):
    scene, reply, out = tmp_path / "s.json", tmp_path / "r.txt", tmp_path / "o.json"
    scene.write_text(json.dumps(ROOM))
    reply.write_text('<think>move</think><tool_calls>[{"name": "move_object", "arguments": '
                     '{"jid": "obj_1", "new_position": [0.5, 0, 0]}}]</tool_calls>')
    assert main(["scenerevis", "apply", str(scene), str(reply), "--out", str(out)]) == 0
    assert "applied: moved obj_1" in capsys.readouterr().out
    assert json.loads(out.read_text())["objects"][0]["pos"] == [0.5, 0, 0]


def test_apply_refuses_a_bad_reply_with_status_1(tmp_path, capsys):
    scene, reply = tmp_path / "s.json", tmp_path / "r.txt"
    scene.write_text(json.dumps(ROOM))
    reply.write_text('<think>x</think><tool_calls>[{"name": "move_object", "arguments": {"jid": "obj_9", '
                     '"new_position": [0, 0, 0]}}]</tool_calls>')
    assert main(["scenerevis", "apply", str(scene), str(reply)]) == 1
    assert "refused: call 1 (move_object): no object with id 'obj_9'" in capsys.readouterr().out


@pytest.mark.parametrize("content,needle", [("{not json", "not a JSON scene"),
                                            ('{"objects": []}', "bounds_bottom must be a list")])
def test_bad_scene_files_exit_2_with_one_line(tmp_path, capsys, content, needle):
    scene = tmp_path / "s.json"
    scene.write_text(content)
    assert main(["scenerevis", "render", str(scene), "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and needle in err[0]


def test_render_writes_the_merged_png(tmp_path):
    from buildbench.render import load_png

    scene = tmp_path / "s.jsonl"
    scene.write_text(json.dumps({"scene": ROOM}) + "\n")
    assert main(["scenerevis", "render", str(scene), "--out", str(tmp_path / "m.png"), "--seed", "3"]) == 0
    assert load_png(tmp_path / "m.png").shape[:2] == (570, 1070)


def test_retrieve_ranks_assets(capsys):
    assert main(["scenerevis", "retrieve", "grey fabric three-seat sofa", "--size", "2.2", "0.85", "0.9",
                 "--top", "2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 2 and all(r["category"] == "sofa" for r in rows)
    assert main(["scenerevis", "retrieve", "sofa", "--size", "0", "1", "1"]) == 2
