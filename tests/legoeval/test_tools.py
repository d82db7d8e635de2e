"""The 21 tools: registry, output keys, true door/window positions, unknown ids, bad arguments,
images, multimodal fallback and model paths."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from buildbench.llm import ScriptedChat
from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.io import load_scene
from buildbench.scenes.model import Scene
from buildbench.suites.legoeval.tools import (
    MENUS,
    TOOLS,
    ToolArgumentError,
    ToolContext,
    image_key,
    is_image_key,
    run_tool,
    tool_menu,
)
from buildbench.suites.legoeval.tools.multimodal import FALLBACK_SOURCE

PNG = b"\x89PNG\r\n\x1a\n"


def house() -> Scene:
    b = HouseBuilder()
    b.room("living room", (0, 0, 6, 4), room_type="living room")
    b.room("bedroom", (6, 0, 10, 4), room_type="bedroom")
    b.door("living room", "bedroom", along=0.2)
    b.door("living room", "exterior", direction="south")
    b.window("bedroom", "north")
    b.place("bed", "bedroom", center_xz=(8, 2), yaw_deg=0)
    b.place("sofa", "living room", center_xz=(3, 1.0), yaw_deg=0)
    table = b.place("table", "living room", center_xz=(3, 2.5), yaw_deg=0)
    b.place("book", "living room", on=table)
    b.place("armchair", "living room", center_xz=(4.5, 1.0), yaw_deg=270)
    return b.build()


@pytest.fixture(scope="module")
def scene() -> Scene:
    return house()


@pytest.fixture()
def ctx(scene: Scene) -> ToolContext:
    return ToolContext.for_scene(scene, render=False)


def test_registry_has_the_21_tools_in_their_groups_and_menus() -> None:
    assert len(TOOLS) == 21
    groups = {g: sorted(n for n, s in TOOLS.items() if s.group == g) for g in ("textual", "environment", "multimodal")}
    assert [len(groups[g]) for g in ("textual", "environment", "multimodal")] == [10, 8, 3]
    assert groups["multimodal"] == ["get_object_match", "get_property_description", "get_property_verification"]
    # §3.4: FL has no multimodal tool; OP the only one with get_object_match.
    assert not any(TOOLS[n].group == "multimodal" for n in MENUS["FL"])
    assert [t for t, m in MENUS.items() if "get_object_match" in m] == ["OP"]
    assert len(MENUS["FL"]) == 14 and len(MENUS["MS"]) == 17 and len(MENUS["OS"]) == 17 and len(MENUS["OP"]) == 18
    # §3.5 families
    assert {n for n, s in TOOLS.items() if s.family == 1} == {
        "get_door_list", "get_window_list", "get_wall_list", "get_object_list"}
    assert TOOLS["get_spatial_relation"].family == 5
    assert {n for n, s in TOOLS.items() if s.family == 3} == {"get_topdown_room", "get_wall_scene", "get_material_image"}
    for spec in TOOLS.values():
        schema = spec.schema()
        assert schema["type"] == "object"
        assert (spec.param is None) == (schema["properties"] == {})


def test_menus_less_disabled_groups_keep_the_list_tools() -> None:
    menu = tool_menu("OP", disabled_groups=("textual", "environment", "multimodal"))
    assert set(menu) == {"get_room_list", "get_wall_list", "get_door_list", "get_window_list", "get_object_list"}
    with pytest.raises(ToolArgumentError, match="XX"):
        tool_menu("XX")


def test_textual_tools_output_keys(ctx: ToolContext, scene: Scene) -> None:
    assert run_tool(ctx, "get_room_list") == {"room_list": ["living room", "bedroom"]}
    info = run_tool(ctx, "get_room_info", {"room_ids": ["bedroom"]})
    assert {"bedroom_coordinates", "bedroom_floor_material"} <= set(info)
    assert info["bedroom_coordinates"][0] == [6.0, 0.0]
    walls = run_tool(ctx, "get_wall_list", ["bedroom"])["bedroom_wall_list"]
    assert walls and not any("exterior" in w for w in walls)
    east = next(w for w in walls if "|east|" in w)
    winfo = run_tool(ctx, "get_wall_info", [east])
    for suffix in ("id", "roomId", "coordinates", "material", "width", "height", "direction", "connected_rooms"):
        assert f"{east}_{suffix}" in winfo
    assert winfo[f"{east}_direction"] == "east" and winfo[f"{east}_width"] == 4.0
    west = next(w for w in walls if "|west|" in w)
    assert run_tool(ctx, "get_wall_info", [west])[f"{west}_connected_rooms"] == ["bedroom", "living room"]
    doors = run_tool(ctx, "get_door_list", ["living room", "bedroom"])
    inner = "door|0|living room|bedroom"
    assert inner in doors["living room"] and doors["bedroom"] == [inner]
    dinfo = run_tool(ctx, "get_door_info", [inner])
    for suffix in ("id", "assetId", "rooms", "walls", "position", "openess"):
        assert f"{inner}_{suffix}" in dinfo
    windows = run_tool(ctx, "get_window_list", ["bedroom", "living room"])
    assert len(windows["bedroom"]) == 1 and windows["living room"] == []
    wid = windows["bedroom"][0]
    assert {f"{wid}_{s}" for s in ("id", "assetId", "rooms", "walls", "position")} <= set(run_tool(
        ctx, "get_window_info", [wid]))
    objects = run_tool(ctx, "get_object_list", ["living room"])["living room"]
    assert "sofa-0 (living room)" in objects and any(o.startswith("book-0|") for o in objects)
    oinfo = run_tool(ctx, "get_object_info", ["bed-0 (bedroom)"])["bed-0 (bedroom)"]
    assert {"id", "assetId", "roomId", "position", "rotation", "coordinates"} <= set(oinfo)
    bed = scene.object("bed-0 (bedroom)")
    # footprint in centimetres, closed, a rectangle of the bed's x/z size around its centre
    xs = [p[0] for p in oinfo["coordinates"]]
    zs = [p[1] for p in oinfo["coordinates"]]
    assert len(oinfo["coordinates"]) == 5 and oinfo["coordinates"][0] == oinfo["coordinates"][-1]
    assert max(xs) - min(xs) == pytest.approx(bed.size[0] * 100, abs=0.02)
    assert max(zs) - min(zs) == pytest.approx(bed.size[2] * 100, abs=0.02)


def test_rotated_footprint_swaps_extents(ctx: ToolContext, scene: Scene) -> None:
    chair = scene.object("armchair-0 (living room)")
    pts = run_tool(ctx, "get_object_info", [chair.id])[chair.id]["coordinates"]
    assert max(p[0] for p in pts) - min(p[0] for p in pts) == pytest.approx(chair.size[2] * 100, abs=0.02)


def test_door_position_is_the_true_hole_centre_with_a_compat_flag(scene: Scene) -> None:
    door = scene.door("door|0|living room|bedroom")
    true = ToolContext.for_scene(scene, render=False)
    compat = ToolContext.for_scene(scene, render=False, wall_midpoint_positions=True)
    p = run_tool(true, "get_door_info", [door.id])[f"{door.id}_position"]
    q = run_tool(compat, "get_door_info", [door.id])[f"{door.id}_position"]
    x, y, z = scene.opening_center(door)
    assert (p["x"], p["y"], p["z"]) == (round(x, 2), round(y, 2), round(z, 2))
    wall = scene.wall(door.wall0)
    assert (q["x"], q["z"]) == (round((wall.start[0] + wall.end[0]) / 2, 2), round((wall.start[1] + wall.end[1]) / 2, 2))
    assert p["z"] != q["z"]  # placed at 20 % of the wall, so not at its midpoint


def test_a_wall_without_material_is_named_as_the_original_names_it_only_in_the_compat_mode() -> None:
    bare = load_scene(Path(__file__).resolve().parents[2] / "tests" / "scenes" / "fixtures" / "real"
                      / "procthor_zg_partial_0_structure.json")  # ProcTHOR's first stage: walls bare
    wall = bare.walls[0]
    assert wall.material is None
    for compat, name in ((False, "Unknown"), (True, "None")):
        ctx = ToolContext.for_scene(bare, render=False, wall_midpoint_positions=compat)
        assert run_tool(ctx, "get_wall_info", [wall.id])[f"{wall.id}_material"] == name


ID_TOOLS = {
    "get_room_info": "room", "get_wall_list": "room", "get_wall_info": "wall", "get_door_list": "room",
    "get_door_info": "door", "get_window_list": "room", "get_window_info": "window", "get_object_list": "room",
    "get_object_info": "object", "get_topdown_room": "room", "get_wall_scene": "wall",
    "get_frontview_object": "object", "get_topdown_object": "object", "get_material_image": "material",
    "get_multiview_rendered_object": "object",
}


@pytest.mark.parametrize("tool", sorted(ID_TOOLS))
def test_unknown_ids_get_an_error_entry_and_the_rest_is_answered(tool: str, scene: Scene) -> None:
    ctx = ToolContext.for_scene(scene, render=False)
    good = {"room": "bedroom", "wall": scene.walls[0].id, "door": scene.doors[0].id,
            "window": scene.windows[0].id, "object": "bed-0 (bedroom)",
            "material": scene.rooms[0].floor_material}[ID_TOOLS[tool]]
    out = run_tool(ctx, tool, ["no-such-thing", good])
    assert "no-such-thing_error" in out
    assert "'no-such-thing'" in out["no-such-thing_error"]
    assert not any(k.startswith(f"{good}_error") for k in out)
    if TOOLS[tool].group == "textual":
        assert any(k.startswith(good) for k in out)


def test_spatial_relation_unknown_ids_and_anchor_frame(ctx: ToolContext) -> None:
    out = run_tool(ctx, "get_spatial_relation", [["sofa-0 (living room)", "armchair-0 (living room)", "ghost"]])
    assert "ghost_error" in out
    rel = out["sofa-0 (living room)|armchair-0 (living room)_relation"]
    # the sofa faces +z, so its right is +x (AI2-THOR's left-handed frame); the armchair is 1.5 m east
    assert rel["side_in_anchor_frame"] == "right of" and rel["right_m"] == pytest.approx(1.5)
    assert rel["faces_anchor"] is True  # yaw 270 faces -x, toward the sofa
    small = run_tool(ctx, "get_spatial_relation", [[next(o for o in ctx.index.objects if o.startswith("book"))]])
    # a small object's receptacle joins its group
    assert any(k.endswith("table-0 (living room)_relation") for k in small)
    assert small[next(k for k in small if k.endswith("_relation"))]["vertical"] == "below"


@pytest.mark.parametrize("args", [{"wall_ids": ["x"]}, {"room_ids": "bedroom", "extra": 1}, [1.5], [float("nan")],
                                  [{"a": 1}], {"room_ids": [True]}])
def test_bad_arguments_raise_one_line_naming_the_tool(ctx: ToolContext, args: object) -> None:
    with pytest.raises(ToolArgumentError, match="get_room_info") as err:
        run_tool(ctx, "get_room_info", args)
    assert "\n" not in str(err.value)


def test_required_arguments_and_no_argument_tools(ctx: ToolContext) -> None:
    with pytest.raises(ToolArgumentError, match="required"):
        run_tool(ctx, "get_object_info", None)
    with pytest.raises(ToolArgumentError, match="takes no arguments"):
        run_tool(ctx, "get_room_list", ["bedroom"])
    with pytest.raises(ToolArgumentError, match="unknown tool"):
        run_tool(ctx, "get_everything", None)
    with pytest.raises(ToolArgumentError, match="expected a non-empty list"):
        run_tool(ctx, "get_spatial_relation", [[]])


def test_environment_tools_return_pngs_under_the_original_key_names(scene: Scene) -> None:
    pytest.importorskip("buildbench.scenes.views", reason="scenes.views not available")
    ctx = ToolContext.for_scene(scene, image_px=96)
    wall = scene.walls_of("bedroom")[0].id
    cases = {
        "get_topdown_scene": (None, [image_key("scene", "topdown_scene")]),
        "get_topdown_room": (["bedroom"], [image_key("bedroom", "topdown_room")]),
        "get_wall_scene": ([wall], [image_key(wall, "wall in scene")]),
        "get_frontview_object": (["bed-0 (bedroom)"], [image_key("bed-0 (bedroom)", "frontview")]),
        "get_topdown_object": (["bed-0 (bedroom)"], [image_key("bed-0 (bedroom)", "topdown_rendered")]),
        "get_material_image": ([scene.rooms[0].floor_material], [image_key(scene.rooms[0].floor_material, "material")]),
        "get_spatial_relation": ([["sofa-0 (living room)", "bed-0 (bedroom)"]],
                                 [image_key("sofa-0 (living room)_bed-0 (bedroom)", "spatial_relation")]),
    }
    for tool, (args, keys) in cases.items():
        out = run_tool(ctx, tool, args)
        for key in keys:
            assert key in out, (tool, sorted(out))
            assert key.endswith("*/*output__image") and is_image_key(key)
            assert out[key].startswith(PNG)
    multi = run_tool(ctx, "get_multiview_rendered_object", ["bed-0 (bedroom)"])
    views = [k for k in multi if is_image_key(k)]
    assert sorted(views) == sorted(image_key("bed-0 (bedroom)", f"{v}_rendered")
                                   for v in ("front", "right", "left", "top", "back"))
    assert ctx.visual_targets == [scene.rooms[0].floor_material, "bed-0 (bedroom)"]


def test_multimodal_fallback_is_labelled_and_uses_catalogue_attributes(ctx: ToolContext) -> None:
    ctx.constraint = "The bed in the bedroom is next to two armchairs."
    run_tool(ctx, "get_multiview_rendered_object", ["bed-0 (bedroom)", "sofa-0 (living room)"])
    match = run_tool(ctx, "get_object_match")
    assert match["multimodal_source"] == FALLBACK_SOURCE
    assert match["categories"] == ["bed", "armchair"]
    assert match["Information of bed-0 (bedroom)"] == {"object type": ["bed"]}
    assert match["Information of sofa-0 (living room)"] == {"object type": []}
    desc = run_tool(ctx, "get_property_description", ["bed-0 (bedroom)"])
    text = desc["summarized visual information of bed-0 (bedroom)"]
    assert "bed" in text and "gray" in text
    ghost = run_tool(ctx, "get_property_description", ["ghost"])
    assert "'ghost'" in ghost["ghost_error"]
    verify = run_tool(ctx, "get_property_verification")
    assert set(verify) >= {"summarized visual information of bed-0 (bedroom)", "features", "multimodal_source"}


def test_multimodal_with_a_vision_model_sends_the_images_and_parses_replies(ctx: ToolContext) -> None:
    def reply(request: object) -> str:
        text = request.messages[-1].text  # type: ignore[attr-defined]
        if text.startswith("TASK: object categories"):
            return "Categories: ['bed', 'lamp']"
        return "Chain-of-Thought: it has a headboard\nObject Type: ['bed', 'toaster']"

    model = ScriptedChat(reply)
    ctx.vision_model = model
    ctx.constraint = "There is a bed and a lamp."
    ctx.remember_visual("bed-0 (bedroom)", [_tiny_png()])
    out = asyncio.run(TOOLS["get_object_match"].fn(ctx, []))
    assert out["categories"] == ["bed", "lamp"]
    assert out["Information of bed-0 (bedroom)"] == {"object type": ["bed"]}  # 'toaster' is not a constraint kind
    assert out["multimodal_source"].startswith("vision model scripted:")
    assert len(model.requests[1].messages[0].images) == 1


def test_multimodal_reports_a_failed_model_call(ctx: ToolContext) -> None:
    ctx.vision_model = ScriptedChat([])
    ctx.remember_visual("bed-0 (bedroom)", [])
    with pytest.raises(RuntimeError, match="vision model call failed"):
        run_tool(ctx, "get_property_description")


def _tiny_png() -> bytes:
    import numpy as np

    from buildbench.llm import ImagePart

    return ImagePart.from_array(np.zeros((4, 4, 4), np.uint8)).png


def test_outputs_are_finite_json(ctx: ToolContext, scene: Scene) -> None:
    import json

    for tool in ("get_room_info", "get_wall_info", "get_object_info"):
        ids = {"get_room_info": ["bedroom"], "get_wall_info": [w.id for w in scene.walls],
               "get_object_info": [o.id for o in scene.objects]}[tool]
        text = json.dumps(run_tool(ctx, tool, ids), allow_nan=False)
        assert "NaN" not in text


def test_the_benchmark_house_has_its_size_and_survives_a_thor_round_trip() -> None:
    from buildbench.scenes.io import load_scene, write_thor
    from buildbench.suites.legoeval.tools.sample import sample_house

    house_ = sample_house(5, 150)
    assert len(house_.rooms) == 5 and len(house_.objects) == 150
    assert sample_house(5, 150).objects == house_.objects  # same seed, same house
    again = load_scene(write_thor(house_))
    ctx_a, ctx_b = ToolContext.for_scene(house_, render=False), ToolContext.for_scene(again, render=False)
    ids = [o.id for o in house_.objects[:20]]
    assert run_tool(ctx_a, "get_object_info", ids) == run_tool(ctx_b, "get_object_info", ids)
    assert run_tool(ctx_a, "get_door_info", [d.id for d in house_.doors]) == run_tool(
        ctx_b, "get_door_info", [d.id for d in again.doors])
