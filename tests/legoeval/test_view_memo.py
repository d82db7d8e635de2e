"""Views drawn once per tool context (``tools.memo``) and geometry built once inside
``settled_scene``: answers equal to a fresh context's, the memo's bound and scene change,
and geometry kept only for the settled scene object."""

from __future__ import annotations

import numpy as np
import pytest

from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.model import Scene
from buildbench.scenes.views import geometry as geometry_module
from buildbench.scenes.views.geometry import scene_geometry
from buildbench.scenes.views.settled import settled_scene
from buildbench.suites.legoeval.tools import ToolContext, run_tool
from buildbench.suites.legoeval.tools.memo import ViewMemo, freeze


def house() -> Scene:
    b = HouseBuilder()
    b.room("living room", (0, 0, 6, 4), room_type="living room")
    b.room("bedroom", (6, 0, 10, 4), room_type="bedroom")
    b.door("living room", "bedroom", along=0.2)
    b.window("bedroom", "north")
    b.place("bed", "bedroom", center_xz=(8, 2), yaw_deg=0)
    b.place("sofa", "living room", center_xz=(3, 1.0), yaw_deg=0)
    b.place("table", "living room", center_xz=(3, 2.5), yaw_deg=90)
    return b.build()


def _ids(scene: Scene) -> dict[str, str]:
    return {"room": scene.rooms[0].id, "wall": scene.walls[0].id, "a": scene.objects[0].id,
            "b": scene.objects[1].id, "c": scene.objects[2].id}


def _calls(scene: Scene) -> list[tuple[str, list[object]]]:
    i = _ids(scene)
    return [("get_multiview_rendered_object", [i["a"], i["b"]]), ("get_topdown_scene", []),
            ("get_multiview_rendered_object", [i["b"]]), ("get_wall_scene", [i["wall"]]),
            ("get_spatial_relation", [[i["a"], i["c"]]]), ("get_topdown_room", [i["room"]]),
            ("get_spatial_relation", [[i["a"], i["c"]]]), ("get_frontview_object", [i["c"], i["a"]]),
            ("get_topdown_object", [i["a"]]), ("get_wall_scene", [i["wall"]]), ("get_frontview_object", [i["a"]])]


def test_a_context_answers_every_view_as_a_fresh_context_does() -> None:
    scene = house()
    kept = ToolContext.for_scene(scene, image_px=48)
    for tool, args in _calls(scene):
        fresh = ToolContext.for_scene(scene, image_px=48)
        assert run_tool(kept, tool, args) == run_tool(fresh, tool, args), tool
    # 13 views asked for, 9 of them distinct: the 4 repeats came from the memo
    assert (kept.views.hits, kept.views.misses) == (4, 9)


def test_a_changed_image_size_or_level_is_drawn_anew() -> None:
    scene = house()
    ctx = ToolContext.for_scene(scene, image_px=32)
    small = run_tool(ctx, "get_topdown_scene", [])
    ctx.image_px = 48
    larger = run_tool(ctx, "get_topdown_scene", [])
    assert small != larger
    assert larger == run_tool(ToolContext.for_scene(scene, image_px=48), "get_topdown_scene", [])


def test_the_memo_keeps_at_most_its_budget_dropping_the_least_recently_used() -> None:
    memo = ViewMemo(budget_bytes=10)
    scene = object()
    drawn: list[str] = []

    def draw(name: str, size: int) -> object:
        def go(_: dict[object, object]) -> bytes:
            drawn.append(name)
            return b"x" * size
        return go

    memo.get(scene, "a", draw("a", 4))
    memo.get(scene, "b", draw("b", 4))
    memo.get(scene, "a", draw("a", 4))        # a is now the most recently used
    memo.get(scene, "c", draw("c", 4))        # 12 bytes: b goes
    memo.get(scene, "a", draw("a", 4))
    memo.get(scene, "b", draw("b", 4))
    assert drawn == ["a", "b", "c", "b"]
    memo.get(scene, "big", draw("big", 11))   # over the whole budget: handed out, never kept
    memo.get(scene, "big", draw("big", 11))
    assert drawn[-2:] == ["big", "big"] and len(memo) <= 3


def test_another_scene_object_empties_the_memo_and_errors_are_not_kept() -> None:
    memo = ViewMemo()
    drawn: list[int] = []

    def draw(_: dict[object, object]) -> bytes:
        drawn.append(1)
        return b"png"

    first, second = object(), object()
    memo.get(first, "k", draw)
    memo.get(first, "k", draw)
    memo.get(second, "k", draw)
    assert len(drawn) == 2

    def fail(_: dict[object, object]) -> bytes:
        raise ValueError("no such element")

    for _ in range(2):
        with pytest.raises(ValueError):
            memo.get(second, "bad", fail)
    assert memo.misses == 4


def test_a_mapping_of_views_is_handed_out_as_a_copy() -> None:
    memo = ViewMemo()
    got = memo.get(object(), "k", lambda _: {"front": b"1"})
    got["front"] = b"changed"  # type: ignore[index]
    scene = object()
    memo.get(scene, "k", lambda _: {"front": b"1"})
    again = memo.get(scene, "k", lambda _: {"front": b"other"})
    again["front"] = b"changed"  # type: ignore[index]
    assert memo.get(scene, "k", lambda _: {"front": b"other"}) == {"front": b"1"}


def test_freeze_tells_lists_from_tuples_and_refuses_unhashables() -> None:
    assert freeze((["a"],)) != freeze((("a",),))
    assert freeze((["a", ["b"]],)) == freeze((["a", ["b"]],))
    with pytest.raises(TypeError):
        freeze((object.__new__(type("Unhashable", (), {"__hash__": None})),))


def test_geometry_is_kept_only_inside_settled_scene_for_that_scene_object() -> None:
    scene, other = house(), house()
    assert scene_geometry(scene) is not scene_geometry(scene)  # outside: built afresh
    store: dict[object, geometry_module.SceneGeometry] = {}
    with settled_scene(scene, store):
        kept = scene_geometry(scene)
        assert scene_geometry(scene) is kept
        assert scene_geometry(scene, front_marks=False) is not kept  # other arguments, other entry
        assert scene_geometry(other) is not scene_geometry(other)   # not the settled object
    with settled_scene(scene, store):
        assert scene_geometry(scene) is kept                          # the store outlives the block
    assert scene_geometry(scene) is not kept
    fresh = scene_geometry(scene)
    np.testing.assert_array_equal(kept.boxes.centers, fresh.boxes.centers)
    assert kept.boxes.owners == fresh.boxes.owners
    with pytest.raises(ValueError):
        kept.boxes.centers[0, 0] = 1.0  # kept arrays are read-only: no view can leave them stale
