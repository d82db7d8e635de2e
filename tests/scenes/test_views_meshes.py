"""Views drawn from asset meshes (``geometry=procedural|mesh``): they differ from the boxes,
show the colours the descriptions give where the objects are, label objects in SceneReVis's
top view, are deterministic, bake textures into face colours, keep closed meshes wound
outward in mirrored frames, and refuse unknown levels."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from buildbench.render import Renderer, RenderUnavailableError, build_scene
from buildbench.scenes.assets import ObjectMesh
from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.model import Scene
from buildbench.scenes.views import (
    REVIS_FRAME,
    THOR_FRAME,
    ViewInputError,
    object_front_view,
    object_multiview,
    object_top_view,
    relation_overlay,
    revis_views,
    topdown_room,
    topdown_scene,
    wall_view,
)
from buildbench.scenes.views.cameras import top_camera
from buildbench.scenes.views.drawing import render_views
from buildbench.scenes.views.meshes import PlacedMesh, face_colors, is_closed, to_render
from buildbench.scenes.views.revis import _annotate, _objects_on_grey_floors

PX = 160
LEVELS = ("box", "procedural")


@pytest.fixture(scope="module", autouse=True)
def _gl() -> None:
    try:
        Renderer(16, 16, samples=0).release()
    except RenderUnavailableError as exc:
        pytest.skip(f"no headless OpenGL here: {exc}")


def _bedroom() -> Scene:
    """A 5 × 4 m bedroom: a red sofa at the south-west, a blue bed in the north half, a
    green wardrobe by the east wall, a table with a chair."""
    b = HouseBuilder()
    b.room("bedroom", (0.0, 0.0, 5.0, 4.0))
    b.window("bedroom", "north")
    b.place("bed", "bedroom", (2.5, 2.8), yaw_deg=180.0, color="blue")
    b.place("sofa", "bedroom", (1.2, 0.8), color="red")
    b.place("wardrobe", "bedroom", (4.5, 1.0), yaw_deg=270.0)
    b.place("table", "bedroom", (3.0, 1.3))
    b.place("chair", "bedroom", (3.0, 0.7))
    scene = b.build()
    # the catalogue has no green wardrobe: the colour comes from the words, as in a generated room
    green = {"color": "green", "description": "a green wardrobe"}
    objects = [replace(o, attributes={**o.attributes, **green}) if o.category == "wardrobe" else o
               for o in scene.objects]
    return replace(scene, objects=objects)


def _reddish(image: np.ndarray) -> np.ndarray:
    c = image[..., :3].astype(float)
    return (c[..., 0] > 70) & (c[..., 0] > 2.0 * c[..., 1]) & (c[..., 0] > 2.0 * c[..., 2])


def _greenish(image: np.ndarray) -> np.ndarray:
    c = image[..., :3].astype(float)
    return (c[..., 1] > 50) & (c[..., 1] > 1.4 * c[..., 0]) & (c[..., 1] > 1.4 * c[..., 2])


def test_every_view_differs_between_box_and_procedural_levels() -> None:
    scene = _bedroom()
    views = {
        "revis": lambda g: np.concatenate(revis_views(scene, 3, px=PX, geometry=g), axis=1),
        "topdown_scene": lambda g: topdown_scene(scene, px=PX, geometry=g),
        "topdown_room": lambda g: topdown_room(scene, "bedroom", px=PX, geometry=g),
        "front": lambda g: object_front_view(scene, "bed-0 (bedroom)", px=PX, geometry=g),
        "top": lambda g: object_top_view(scene, "table-0 (bedroom)", px=PX, geometry=g),
        "multiview": lambda g: np.concatenate(list(object_multiview(scene, "chair-0 (bedroom)", px=PX,
                                                                    geometry=g).values()), axis=1),
        "relation": lambda g: relation_overlay(scene, ["bed-0 (bedroom)", "sofa-0 (bedroom)"], px=PX, geometry=g),
        "wall": lambda g: wall_view(scene, scene.walls_of("bedroom")[0].id, px=PX, geometry=g),
    }
    for name, view in views.items():
        box, procedural = view("box"), view("procedural")
        assert box.shape == procedural.shape, name
        assert not np.array_equal(box, procedural), f"{name}: procedural meshes drew the same image as boxes"


def test_box_level_is_the_default_and_unchanged() -> None:
    scene = _bedroom()
    assert np.array_equal(topdown_room(scene, "bedroom", px=PX), topdown_room(scene, "bedroom", px=PX, geometry="box"))
    default = revis_views(scene, 1, px=PX)
    boxed = revis_views(scene, 1, px=PX, geometry="box")
    assert all(np.array_equal(a, b) for a, b in zip(default, boxed, strict=True))


@pytest.mark.parametrize("level", LEVELS)
def test_description_colours_appear_where_the_objects_are(level: str) -> None:
    scene = _bedroom()
    room = topdown_room(scene, "bedroom", px=PX, geometry=level, labels=False)
    # THOR frame from above: east right, north up. The room spans x 0..5, z 0..4 in a square
    # image with a 6 % margin on each side (the larger extent, 5 m, sets the scale).
    span = 5.0 / (1.0 - 2 * 0.06)

    def pixel(x: float, z: float) -> tuple[int, int]:
        return int(PX / 2 + (x - 2.5) / span * PX), int(PX / 2 - (z - 2.0) / span * PX)

    col, row = pixel(1.2, 0.8)
    assert _reddish(room)[row - 3:row + 4, col - 6:col + 7].mean() > 0.5  # the red sofa
    col, row = pixel(4.5, 1.0)
    assert _greenish(room)[row - 6:row + 7, col - 2:col + 3].mean() > 0.5  # the green wardrobe
    assert not _reddish(room)[row, col] and not _greenish(room)[pixel(1.2, 0.8)[::-1]]
    top, _ = revis_views(scene, 0, px=PX, background=(1.0, 1.0, 1.0), geometry=level)
    # REVIS frame from above: +x right, +z down; ortho scale 1.2 × 5 m. The sofa's footprint
    # (x 0.2..2.2, z 0.35..1.25) is red but where its id label covers it, the wardrobe's
    # (0.6 × 1.2 m, turned) green.
    def box_px(mask: np.ndarray, x0: float, z0: float, x1: float, z1: float) -> np.ndarray:
        c0, r0 = int(PX / 2 + (x0 - 2.5) / 6.0 * PX) + 2, int(PX / 2 + (z0 - 2.0) / 6.0 * PX) + 2
        c1, r1 = int(PX / 2 + (x1 - 2.5) / 6.0 * PX) - 2, int(PX / 2 + (z1 - 2.0) / 6.0 * PX) - 2
        return mask[r0:r1, c0:c1]

    assert box_px(_reddish(top), 0.2, 0.35, 2.2, 1.25).mean() > 0.25
    assert box_px(_greenish(top), 4.2, 0.4, 4.8, 1.6).mean() > 0.25


def test_revis_top_view_labels_objects_at_mesh_levels_only() -> None:
    scene = _bedroom()
    geo = _objects_on_grey_floors(scene, "procedural")
    (x0, z0), (x1, z1) = scene.bounds_xz()
    camera = top_camera(REVIS_FRAME, ((x0 + x1) / 2, (z0 + z1) / 2), 1.2 * 5.0, eye_y=8.0, floor_y=-0.15,
                        image_up_xz=(0.0, -1.0))
    image = render_views(geo.render_scene(REVIS_FRAME, floor_thickness_m=0.15), [camera], 256)[0]
    dots = np.zeros((0, 3))
    plain = _annotate(image, camera, geo.boxes, dots, 256, (1.0, 1.0, 1.0), labels=False)
    labelled = _annotate(image, camera, geo.boxes, dots, 256, (1.0, 1.0, 1.0), labels=True)
    changed = np.any(plain != labelled, axis=2)
    # each label sits on its object's top centre
    for x, z in ((2.5, 2.8), (1.2, 0.8), (4.5, 1.0)):
        col, row = int(128 + (x - 2.5) / 6.0 * 256), int(128 + (z - 2.0) / 6.0 * 256)
        assert changed[row - 4:row + 5, col - 10:col + 11].any(), (x, z)
    # the whole view: labels only above the box level
    box_top, box_diag = revis_views(scene, 0, px=256, geometry="box")
    mesh_top, mesh_diag = revis_views(scene, 0, px=256, geometry="procedural")
    dark = lambda im: int(((im[..., :3].max(axis=2) < 40) & (im[..., 3] > 200)).sum())  # noqa: E731
    assert dark(mesh_top) > dark(box_top) + 50


@pytest.mark.parametrize("level", LEVELS)
def test_renders_are_deterministic(level: str) -> None:
    a = revis_views(_bedroom(), 5, px=PX, geometry=level)
    b = revis_views(_bedroom(), 5, px=PX, geometry=level)
    assert all(x.tobytes() == y.tobytes() for x, y in zip(a, b, strict=True))
    views_a = object_multiview(_bedroom(), "bed-0 (bedroom)", px=PX, geometry=level)
    views_b = object_multiview(_bedroom(), "bed-0 (bedroom)", px=PX, geometry=level)
    assert all(views_a[k].tobytes() == views_b[k].tobytes() for k in views_a)


@pytest.mark.parametrize("bad", ["boxes", "", "MESH", None, 3])
def test_an_unknown_level_is_refused_naming_the_levels(bad: object) -> None:
    scene = _bedroom()
    for call in (lambda: revis_views(scene, 0, px=PX, geometry=bad),  # type: ignore[arg-type]
                 lambda: topdown_room(scene, "bedroom", px=PX, geometry=bad),  # type: ignore[arg-type]
                 lambda: object_multiview(scene, "bed-0 (bedroom)", px=PX, geometry=bad)):  # type: ignore[arg-type]
        with pytest.raises(ViewInputError, match=r"geometry must be one of box, procedural, mesh"):
            call()


def test_a_texture_is_baked_into_face_colours() -> None:
    # Two triangles: one mapped into the texture's red left half, one into its green right half.
    texture = Image.new("RGB", (8, 4), (255, 0, 0))
    texture.paste((0, 200, 0), (4, 0, 8, 4))
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float)
    faces = np.array([[0, 1, 2], [1, 3, 2]])
    uv = np.array([[0.05, 0.1], [0.45, 0.1], [0.05, 0.9], [0.95, 0.9]])
    uv_right = uv.copy()
    uv_right[:, 0] += 0.5
    grey = np.full((2, 4), 128, np.uint8)
    left = face_colors(ObjectMesh(vertices, faces, grey, uv=uv, texture=texture, source="test"))
    assert left[0].tolist() == [255, 0, 0, 128]
    right = face_colors(ObjectMesh(vertices, faces, grey, uv=uv_right % 1.0, texture=texture, source="test"))
    assert right[0].tolist() == [0, 200, 0, 128]
    # without a texture the mesh's own colours stand
    assert face_colors(ObjectMesh(vertices, faces, grey, source="test")).tolist() == grey.tolist()


def _cube(owner: str, centre: tuple[float, float, float]) -> PlacedMesh:
    v = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]) + centre
    f = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                  [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    colors = np.tile(np.array([200, 120, 40, 255], np.uint8), (12, 1))
    return PlacedMesh(owner, v, f, colors, is_closed(f))


def test_closed_meshes_are_culled_only_from_behind_in_both_frames() -> None:
    cube = _cube("c", (0.0, 0.5, 0.0))
    assert cube.closed and not is_closed(cube.faces[:-1])
    for frame in (THOR_FRAME, REVIS_FRAME):
        closed = build_scene([], to_render([cube], frame))
        open_ = build_scene([], to_render([cube._replace(closed=False)], frame))
        assert closed.closed_vertex_count == 36 and open_.closed_vertex_count == 0
        camera = top_camera(frame, (0.3, 0.2), 3.0, eye_y=4.0, floor_y=0.0)
        from buildbench.render import Camera

        oblique = Camera(frame.points(np.array([2.0, 2.5, 2.5])), frame.points(np.array([0.0, 0.5, 0.0])),
                         frame.up(), near_m=0.1, far_m=20.0)
        for cam in (camera, oblique):
            a, b = render_views(closed, [cam], 64)[0], render_views(open_, [cam], 64)[0]
            assert (a[..., 3] > 0).sum() > 100
            assert np.array_equal(a, b), frame.name


def _future_cube(root: Path, jid: str) -> None:
    """A 3D-FUTURE-layout asset: a cube whose top face maps into the texture's magenta left
    half and every other face into its cyan right half."""
    folder = root / jid
    folder.mkdir(parents=True)
    texture = Image.new("RGB", (16, 16), (255, 0, 255))
    texture.paste((0, 255, 255), (8, 0, 16, 16))
    texture.save(folder / "texture.png")
    corners = [(x, y, z) for x in (0, 1) for y in (0, 1) for z in (0, 1)]
    lines = [f"v {x} {y} {z}" for x, y, z in corners]
    lines += ["vt 0.1 0.1", "vt 0.4 0.1", "vt 0.4 0.9", "vt 0.1 0.9",
              "vt 0.6 0.1", "vt 0.9 0.1", "vt 0.9 0.9", "vt 0.6 0.9"]
    quads = {"top": (3, 4, 8, 7), "bottom": (1, 5, 6, 2), "west": (1, 2, 4, 3), "east": (5, 7, 8, 6),
             "south": (1, 3, 7, 5), "north": (2, 6, 8, 4)}
    for name, quad in quads.items():
        uv = (1, 2, 3, 4) if name == "top" else (5, 6, 7, 8)
        lines.append("f " + " ".join(f"{v}/{t}" for v, t in zip(quad, uv, strict=True)))
    (folder / "raw_model.obj").write_text("\n".join(lines) + "\n")


def test_mesh_level_draws_the_asset_with_its_texture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _future_cube(tmp_path / "future", "cube-jid")
    monkeypatch.setenv("BUILDBENCH_3DFUTURE_DIR", str(tmp_path / "future"))
    monkeypatch.setenv("BUILDBENCH_ASSET_CACHE", str(tmp_path / "cache"))
    b = HouseBuilder()
    b.room("r", (0.0, 0.0, 4.0, 4.0))
    b.place("cabinet", "r", (2.0, 2.0))
    scene = b.build()
    scene = replace(scene, objects=[replace(o, asset_id="cube-jid") for o in scene.objects])
    image = topdown_room(scene, "r", px=PX, geometry="mesh", labels=False)
    c = image[PX // 2 - 3:PX // 2 + 4, PX // 2 - 3:PX // 2 + 4, :3].astype(int)
    # the top face is the texture's magenta, not the texture's mean (a lavender grey)
    assert np.all(c[..., 0] > 150) and np.all(c[..., 2] > 150) and np.all(c[..., 1] < 40)
    side = object_front_view(scene, scene.objects[0].id, px=PX, geometry="mesh")
    cyan = (side[..., 1] > 150) & (side[..., 2] > 150) & (side[..., 0] < 40)
    assert cyan.sum() > 200  # the front face is the cyan half
    # no asset folder: the mesh level is refused with one line naming the variables
    monkeypatch.delenv("BUILDBENCH_3DFUTURE_DIR")
    with pytest.raises(ViewInputError, match="geometry=mesh needs an asset folder"):
        topdown_room(scene, "r", px=PX, geometry="mesh")


def test_scenerevis_merged_feedback_image_from_meshes() -> None:
    from buildbench.suites.scenerevis.render import render_merged

    floor = [[-2.0, 0.0, 2.0], [2.0, 0.0, 2.0], [2.0, 0.0, -2.0], [-2.0, 0.0, -2.0]]
    flat = {"room_type": "bedroom", "bounds_bottom": floor, "bounds_top": [[x, 2.6, z] for x, _, z in floor],
            "objects": [{"id": "bed_0", "desc": "a king-size bed with a blue duvet", "size": [1.8, 1.0, 2.1],
                         "pos": [0.0, 0.0, -0.8], "rot": [0, 0, 0, 1]},
                        {"id": "sofa_0", "desc": "a red leather three-seat sofa", "size": [2.0, 0.8, 0.9],
                         "pos": [0.0, 0.0, 1.4], "rot": [0, 1, 0, 0]}]}
    box = render_merged(flat, seed=1, geometry="box")
    mesh = render_merged(flat, seed=1, geometry="procedural")
    assert box.shape == mesh.shape == (570, 1070, 3)
    assert not np.array_equal(box, mesh)
    assert render_merged(flat, seed=1, geometry="procedural").tobytes() == mesh.tobytes()
    # the top panel (left) shows the red sofa in the south of the room (+z is down the image)
    top = mesh[44:44 + 512, 14:14 + 512]
    sofa = _reddish(np.dstack([top, np.full(top.shape[:2], 255, np.uint8)])) & (top[..., 0] < 230)  # not the dots
    rows, _ = np.nonzero(sofa)
    assert rows.size > 2000 and rows.mean() > 300


def test_meshes_are_reused_between_views_but_never_stale() -> None:
    from buildbench.scenes.views.meshes import clear_mesh_cache

    scene = _bedroom()
    clear_mesh_cache()
    cold = topdown_room(scene, "bedroom", px=PX, geometry="procedural")
    assert np.array_equal(cold, topdown_room(scene, "bedroom", px=PX, geometry="procedural"))
    # the same sofa (same id) turned green and moved: the view follows both
    green = {"color": "green", "description": "a green sofa"}
    moved = replace(scene, objects=[replace(o, attributes={**o.attributes, **green}, center=(1.2, o.center[1], 3.2))
                                    if o.category == "sofa" else o for o in scene.objects])
    after = topdown_room(moved, "bedroom", px=PX, geometry="procedural", labels=False)
    span = 5.0 / (1.0 - 2 * 0.06)
    col, old_row, new_row = int(PX / 2 + (1.2 - 2.5) / span * PX), int(PX / 2 + 1.2 / span * PX), \
        int(PX / 2 - 1.2 / span * PX)
    assert not _reddish(after)[old_row - 3:old_row + 4, col - 6:col + 7].any()
    assert _greenish(after)[new_row - 3:new_row + 4, col - 6:col + 7].mean() > 0.5


def test_the_clis_draw_from_meshes_and_refuse_a_bad_level(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from buildbench.cli.main import main

    floor = [[-2.0, 0.0, 2.0], [2.0, 0.0, 2.0], [2.0, 0.0, -2.0], [-2.0, 0.0, -2.0]]
    room = {"room_type": "bedroom", "bounds_bottom": floor, "bounds_top": [[x, 2.6, z] for x, _, z in floor],
            "objects": [{"desc": "a red leather sofa", "size": [2.0, 0.8, 0.9], "pos": [0.0, 0.0, 1.4],
                         "rot": [0, 1, 0, 0], "jid": "sofa-1"}]}
    (tmp_path / "room.json").write_text(json.dumps(room))
    outs = {}
    for level in ("box", "procedural"):
        outs[level] = tmp_path / f"{level}.png"
        assert main(["scenerevis", "render", str(tmp_path / "room.json"), "--out", str(outs[level]),
                     "--geometry", level]) == 0
    assert not np.array_equal(np.asarray(Image.open(outs["box"])), np.asarray(Image.open(outs["procedural"])))
    monkeypatch.delenv("BUILDBENCH_3DFUTURE_DIR", raising=False)
    monkeypatch.delenv("BUILDBENCH_OBJAVERSE_DIR", raising=False)
    capsys.readouterr()
    assert main(["scenerevis", "render", str(tmp_path / "room.json"), "--out", str(tmp_path / "m.png"),
                 "--geometry", "mesh"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --geometry mesh:") and "asset folder" in err[0]
    assert main(["scenerevis", "render", str(tmp_path / "room.json"), "--out", str(tmp_path / "m.png"),
                 "--geometry", "boxes"]) == 2


def test_legoeval_tools_render_at_the_context_s_level() -> None:
    from buildbench.suites.legoeval.env import make_env
    from buildbench.suites.legoeval.tools import ToolContext, is_image_key, run_tool

    scene = _bedroom()

    def images(level: str) -> list[bytes]:
        ctx = ToolContext.for_scene(scene, image_px=64, geometry=level)
        out = {**run_tool(ctx, "get_topdown_room", ["bedroom"]),
               **run_tool(ctx, "get_multiview_rendered_object", ["sofa-0 (bedroom)"]),
               **run_tool(ctx, "get_frontview_object", ["bed-0 (bedroom)"])}
        return [v for k, v in sorted(out.items()) if is_image_key(k)]

    box, procedural = images("box"), images("procedural")
    assert len(box) == len(procedural) == 7
    assert all(a != b for a, b in zip(box, procedural, strict=True))
    from buildbench.suites.legoeval.suite import load_tasks, suite

    env = make_env(load_tasks("demo", 0)[0], suite.parse_options({"geometry": "procedural"}))
    env.reset(env.task)
    assert env.ctx is not None and env.ctx.geometry == "procedural"


def test_an_inward_wound_closed_mesh_is_drawn_from_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    from buildbench.scenes.views.meshes import _local_mesh, clear_mesh_cache

    cube = _cube("c", (0.0, 0.0, 0.0))
    colors = cube.colors.copy()
    colors[6:8] = (220, 20, 20, 255)  # the top (+y) face red, the rest orange
    b = HouseBuilder()
    b.room("r", (0.0, 0.0, 2.0, 2.0))
    b.place("cabinet", "r", (1.0, 1.0))
    obj = b.build().objects[0]
    cam = top_camera(THOR_FRAME, (1.0, 1.0), 3.0, eye_y=4.0, floor_y=0.0)
    for faces in (cube.faces, cube.faces[:, ::-1].copy()):
        clear_mesh_cache()
        mesh = ObjectMesh(cube.vertices, faces, colors, source="test")
        monkeypatch.setattr("buildbench.scenes.assets.object_mesh", lambda *a, m=mesh, **k: m)
        local = _local_mesh(obj, "procedural", None)
        assert local.closed
        placed = local.placed(obj, np.eye(3))
        image = render_views(build_scene([], to_render([placed], THOR_FRAME)), [cam], 64)[0]
        # seen from above: the red top, not the inside of the bottom through a culled top
        assert _reddish(image)[28:36, 28:36].all()
    clear_mesh_cache()
