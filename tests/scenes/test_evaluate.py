"""``buildbench scenes evaluate``: a generator's real outputs scored end to end by LEGO-Eval and
SceneReVis into runs that ``buildbench report`` shows beside the papers' rows."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.scenes.evaluate import constraints_of

EXT = Path(__file__).parent / "fixtures" / "external"
LAYOUTGPT = EXT / "layoutgpt" / "gpt4.bedroom.first3.json"
SCENEEVAL = EXT / "sceneeval" / "LayoutGPT_scene_0.json"


def report(run: Path) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(run), "--json"]) == 0
    return json.loads(out.getvalue())


def crowded(src: Path, dst: Path) -> None:
    """A deliberately worse generator: LayoutGPT's scenes with every object pushed onto the bed."""
    data = json.loads(src.read_text())
    for scene in data:
        bed = scene["object_list"][0][1]
        for _, box in scene["object_list"][1:]:
            box["left"], box["top"] = bed["left"], bed["top"]
    dst.write_text(json.dumps(data))


@pytest.fixture
def generators(tmp_path: Path) -> tuple[Path, Path]:
    good, bad = tmp_path / "layoutgpt", tmp_path / "crowded"
    good.mkdir()
    bad.mkdir()
    shutil.copy(LAYOUTGPT, good / LAYOUTGPT.name)
    crowded(LAYOUTGPT, bad / LAYOUTGPT.name)
    return good, bad


def test_layoutgpt_real_outputs_scored_end_to_end(generators: tuple[Path, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = generators
    run = tmp_path / "run"
    assert main(["scenes", "evaluate", str(good), str(bad), "--format", "layoutgpt", "--run-dir", str(run)]) == 0
    assert "buildbench report" in capsys.readouterr().out
    lego = report(run / "legoeval")
    t3 = {r["method"]: r for r in lego["tables"]["Table 3: success rates (%)"]}
    assert t3["LayoutGPT"]["source"] == "paper" and t3["LayoutGPT"]["holistic_sr"] == 6.9
    for name in ("layoutgpt", "crowded"):
        assert t3[name]["source"] == "ours" and t3[name]["scenes"] == 3
        # the prompt's condition: the room exists and fits max length x max width (both hold)
        assert t3[name]["holistic_sr"] == 100.0 and t3[name]["FL"] == 100.0
    revis = report(run / "scenerevis")
    t1 = revis["tables"]["Table 1: bedroom / living room (OBR, CNR %; Ra, Spa, Ac, Avg 1-10)"]
    rows = {(r["source"], r["group"]): r for r in t1}
    ours, worse = rows[("ours: layoutgpt", "bedroom")], rows[("ours: crowded", "bedroom")]
    assert ours["n"] == worse["n"] == 3
    assert worse["CNR"] > ours["CNR"]  # piling everything on the bed collides
    assert ours["judge"] == "rule judge: not comparable"
    assert rows[("paper: LayoutGPT", "bedroom")]["OBR"] == 34.3
    assert "VBL" in revis["tables"]["Table 4: ablation (VBL = voxel loss x 10^3, Phy = mean of OBR and CNR)"][0]


def test_prompts_file_and_a_format_without_prompts(tmp_path: Path) -> None:
    gen = tmp_path / "gen"
    gen.mkdir()
    shutil.copy(SCENEEVAL, gen / "scene_0.json")
    sizes = tmp_path / "sizes.json"
    doc = json.loads(SCENEEVAL.read_text())
    sizes.write_text(json.dumps({o["modelId"]: [0.5, 0.8, 0.5] for o in doc["scene"]["object"]}))
    run = tmp_path / "run"
    args = ["scenes", "evaluate", str(gen), "--format", "sceneeval", "--run-dir", str(run),
            "--asset-sizes", str(sizes), "--name", "LayoutGPT-in-SceneEval"]
    assert main(args) == 2  # SceneEval's files carry no prompt
    assert not run.exists()
    (gen / "prompts.jsonl").write_text(json.dumps({
        "scene": "scene_0.json", "instruction": "A bedroom.", "room": "bedroom",
        "constraints": [{"id": "c1", "text": "There are at least 3 objects.", "type": "OS"},
                        {"id": "c2", "text": "The house has a bedroom.", "type": "FL"}]}) + "\n")
    assert main(args) == 0
    eps = report(run / "legoeval")["tables"]["Table 3: success rates (%)"]
    assert [r["method"] for r in eps if r["source"] == "ours"] == ["LayoutGPT-in-SceneEval"]


def test_constraints_from_sentences() -> None:
    got = constraints_of("The house has a bedroom. There is a bed. Make it feel warm!")
    assert [c["text"] for c in got] == ["The house has a bedroom.", "There is a bed.", "Make it feel warm!"]
    assert [c["type"] for c in got] == ["FL", "OP", "OS"]  # the last is outside the grammar: counted as OS


@pytest.mark.parametrize("break_it, message", [
    (lambda g: (g / "prompts.jsonl").write_text('{"scene": "other.json", "instruction": "x"}\n'),
     "prompts.jsonl: line 1: scene 'other.json' is not in the folder"),
    (lambda g: (g / "prompts.jsonl").write_text('\n{"scene": \n'), "prompts.jsonl: line 2: invalid JSON"),
    (lambda g: (g / "broken.json").write_text('[{"prompt": "Room Size: max length 10px, max width 10px",\n'
                                             ' "object_list": [["bed", {"length": 1}]]}]'),
     "broken.json: line 2: [0].object_list[0].width: missing"),
    # a prompts.jsonl that cannot be read is a mistake, not "no prompts"
    (lambda g: (g / "prompts.jsonl").write_bytes(b'{"scene": "x", "instruction": "caf\xe9"}\n'),
     "prompts.jsonl: cannot read (not UTF-8 text (line 1"),
    (lambda g: (g / "prompts.jsonl").mkdir(), "prompts.jsonl: cannot read (is a folder"),
    (lambda g: (g / "prompts.jsonl").write_text(f'{{"scene": "{LAYOUTGPT.name}", "instruction": "A bed.", '
                                                '"room": NaN}\n'),
     "prompts.jsonl: line 1: invalid JSON: NaN is not a finite number"),
    (lambda g: (g / "prompts.jsonl").write_text(f'{{"scene": "{LAYOUTGPT.name}", "room": 5}}\n'),
     "prompts.jsonl: line 1: room: expected a string"),
    # a type outside FL/MS/OS/OP would be counted in none of Table 3's columns
    (lambda g: (g / "prompts.jsonl").write_text(json.dumps(
        {"scene": "bedroom-1", "constraints": [{"text": "x", "type": "BOGUS"}]}) + "\n"),
     "prompts.jsonl: line 1: constraints[0].type: 'BOGUS' is not one of FL, MS, OS, OP"),
    (lambda g: (g / "prompts.jsonl").write_text(json.dumps(
        {"scene": "bedroom-1", "constraints": [{"id": "c1", "text": "x"}, {"id": "c1", "text": "y"}]}) + "\n"),
     "prompts.jsonl: line 1: constraints: id 'c1' given twice"),
    # a second file with the same query ids: the prompt line would judge two scenes on one prompt
    (lambda g: (shutil.copy(LAYOUTGPT, g / "copy.json"), (g / "prompts.jsonl").write_text(json.dumps(
        {"scene": "52e1f54c-3d9b-4d69-bebc-decfdc950f7c_Bedroom-803", "instruction": "There is a bed."}) + "\n")),
     "prompts.jsonl: line 1: scene '52e1f54c-3d9b-4d69-bebc-decfdc950f7c_Bedroom-803' names 2 scenes"),
])
def test_bad_inputs_leave_no_run(generators: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 break_it: Any, message: str) -> None:
    good, _ = generators
    break_it(good)
    run = tmp_path / "run"
    capsys.readouterr()
    assert main(["scenes", "evaluate", str(good), "--format", "layoutgpt", "--run-dir", str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err
    assert not run.exists()


def test_bad_arguments(generators: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = generators
    run = tmp_path / "run"
    for args in (["--suite", "bogus"], ["--name", "x", str(bad)], ["--evaluator", "nobody"], ["--evaluator", "llm"],
                 ["--identify"]):
        capsys.readouterr()
        assert main(["scenes", "evaluate", str(good), "--format", "layoutgpt", "--run-dir", str(run), *args]) == 2
        assert capsys.readouterr().err.startswith("error: ")
        assert not run.exists()


def test_demo_compares_a_scripted_and_a_degraded_generator(tmp_path: Path) -> None:
    from rich.console import Console

    from buildbench.cli import demo

    console = Console(width=100, record=True)
    demo.run_demo(tmp_path / "runs", ("generators",), console=console)
    text = console.export_text()
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in text.splitlines() if line.startswith("│")}
    scripted, degraded = rows["scripted"], rows["degraded"]
    assert scripted[0] == degraded[0] == "2"
    assert float(scripted[1]) > float(degraded[1])  # LEGO-Eval holistic SR
    assert float(scripted[4]) < float(degraded[4])  # SceneReVis CNR


def test_identified_constraints_give_table_4_rows(generators: tuple[Path, Path], tmp_path: Path) -> None:
    good, _ = generators
    run = tmp_path / "run"
    assert main(["scenes", "evaluate", str(good), "--format", "layoutgpt", "--run-dir", str(run), "--suite",
                 "legoeval", "--evaluator", "llm", "--model", "scripted", "--identify"]) == 0
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["legoeval", "report", str(run / "legoeval"), str(run / "legoeval-identify"), "--json"]) == 0
    t4 = json.loads(out.getvalue())["tables"]["Table 4: identified vs given (oracle) constraints"]
    assert {r["setting"] for r in t4 if r["source"] == "paper"} >= {"Oracle constraint", "Identified constraint"}
    ours = [r for r in t4 if r["source"] == "ours"]
    assert [r["setting"] for r in ours] == ["Oracle constraint", "Identified constraint", "Difference"]
    assert all(r["run"].startswith("layoutgpt") for r in ours)


def test_a_model_judge_scores_the_renders(generators: tuple[Path, Path], tmp_path: Path) -> None:
    from buildbench.llm import ScriptedChat
    from buildbench.scenes.evaluate import evaluate

    good, _ = generators
    reply = json.dumps({"rationality": 8, "spatial_layout": 7, "accessibility": 9, "comment": "Tidy."})
    runs = evaluate([good], "layoutgpt", tmp_path / "run", suites=["scenerevis"], judge="scripted",
                    judge_model=ScriptedChat(replies=[reply] * 3))
    t1 = report(runs["scenerevis"])["tables"]["Table 1: bedroom / living room (OBR, CNR %; Ra, Spa, Ac, Avg 1-10)"]
    ours = next(r for r in t1 if r["source"] == "ours: layoutgpt" and r["group"] == "bedroom")
    assert (ours["Ra"], ours["Spa"], ours["Ac"]) == (8.0, 7.0, 9.0)
    assert ours["judge"] != "rule judge: not comparable"
    capsys_free = main(["scenes", "evaluate", str(good), "--format", "layoutgpt", "--run-dir", str(tmp_path / "r2"),
                        "--judge", "nosuchprovider:x"])
    assert capsys_free == 2 and not (tmp_path / "r2").exists()


def test_sceneeval_layout_with_its_annotations_csv(tmp_path: Path) -> None:
    """SceneEval's own input layout: input/annotations.csv beside input/<Method>/scene_{ID}.json."""
    method = tmp_path / "input" / "LayoutVLM"
    method.mkdir(parents=True)
    real = EXT / "sceneeval" / "LayoutVLM_scene_0.json"
    shutil.copy(real, method / "scene_0.json")
    (tmp_path / "input" / "annotations.csv").write_text(
        "ID,Difficulty,Description,ObjCount,ObjAttr,OORel,OARel\n"
        '0,easy,"The house has a room. There are at least 5 objects.",,,,\n')
    sizes = tmp_path / "sizes.json"
    doc = json.loads(real.read_text())
    sizes.write_text(json.dumps({o["modelId"]: [0.6, 0.9, 0.6] for o in doc["scene"]["object"]}))
    run = tmp_path / "run"
    assert main(["scenes", "evaluate", str(method), "--format", "sceneeval", "--run-dir", str(run),
                 "--asset-sizes", str(sizes)]) == 0
    t3 = report(run / "legoeval")["tables"]["Table 3: success rates (%)"]
    ours = [r for r in t3 if r["source"] == "ours"]
    # the folder's name is the row, beside the paper's own LayoutVLM row
    assert [r["method"] for r in ours] == ["LayoutVLM"] and ours[0]["scenes"] == 1
    assert any(r["method"] == "LayoutVLM" and r["source"] == "paper" for r in t3)
    assert ours[0]["OP"] == 100.0  # "at least 5 objects" (a count, OP by the grammar): the scene has 10


def test_a_holodeck_house_is_judged_whole_and_room_by_room(tmp_path: Path) -> None:
    gen = tmp_path / "holodeck"
    gen.mkdir()
    shutil.copy(Path(__file__).parent / "fixtures" / "holodeck_open_kitchen_living.json", gen / "house.json")
    (gen / "prompts.jsonl").write_text(json.dumps({"scene": "house.json",
                                                   "instruction": "The house has a kitchen."}) + "\n")
    run = tmp_path / "run"
    assert main(["scenes", "evaluate", str(gen), "--format", "holodeck", "--run-dir", str(run)]) == 0
    assert report(run / "legoeval")["episodes"] == 1
    revis = report(run / "scenerevis")
    assert revis["episodes"] == 2  # the open kitchen and the living room, each a SceneReVis room


def test_prompts_by_scene_name_inside_a_file(tmp_path: Path) -> None:
    from buildbench.scenes.evaluate import read_generator

    gen = tmp_path / "gpt4"
    gen.mkdir()
    shutil.copy(LAYOUTGPT, gen / "out.json")
    qid = json.loads(LAYOUTGPT.read_text())[1]["query_id"]
    (gen / "prompts.jsonl").write_text(json.dumps({"scene": qid, "instruction": "There is a wardrobe."}) + "\n")
    scenes = read_generator(gen, "layoutgpt")
    assert [g.generator for g in scenes] == ["gpt4"] * 3
    assert scenes[1].instruction == "There is a wardrobe." and scenes[1].key == f"out.json#{qid}"
    assert scenes[0].instruction.startswith("The house has a bedroom.")  # the file's own condition


def test_a_house_without_rooms_is_a_failed_episode_not_left_out(tmp_path: Path) -> None:
    gen = tmp_path / "gen"
    gen.mkdir()
    house = json.loads((Path(__file__).parent / "fixtures" / "holodeck_a_living_room.json").read_text())
    shutil.copy(Path(__file__).parent / "fixtures" / "holodeck_a_living_room.json", gen / "b.json")
    for key in ("rooms", "walls", "doors", "windows", "objects"):
        house[key] = []
    (gen / "a.json").write_text(json.dumps(house))
    (gen / "prompts.jsonl").write_text('{"scene": "a.json", "instruction": "There is a bed."}\n')
    run = tmp_path / "run"
    assert main(["scenes", "evaluate", str(gen), "--format", "holodeck", "--run-dir", str(run),
                 "--suite", "scenerevis"]) == 0
    rep = report(run / "scenerevis")
    assert rep["episodes"] == rep["expected_episodes"] == 2 and rep["status"] == {"failed": 1, "ok": 1}


def test_the_missing_prompt_hint_names_the_key_that_works(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gen = tmp_path / "gen"
    gen.mkdir()
    room = {"bounds_bottom": [[0, 0, 0], [3, 0, 0], [3, 0, 3], [0, 0, 3]],
            "bounds_top": [[0, 2.6, 0], [3, 2.6, 0], [3, 2.6, 3], [0, 2.6, 3]], "objects": []}
    (gen / "rooms.jsonl").write_text("".join(json.dumps({"room_type": "bedroom", "scene": {**room, "room_id": rid}})
                                             + "\n" for rid in ("first", "second")))
    args = ["scenes", "evaluate", str(gen), "--format", "respace", "--run-dir", str(tmp_path / "run"),
            "--suite", "scenerevis"]
    capsys.readouterr()
    assert main(args) == 2
    # the file holds two scenes: keying the prompt by the file's name would match neither
    assert '{"scene": "first", "instruction": ...}' in capsys.readouterr().err
    (gen / "prompts.jsonl").write_text("".join(json.dumps({"scene": rid, "instruction": "There is a bed."}) + "\n"
                                               for rid in ("first", "second")))
    assert main(args) == 0
