"""Holding a scene's index (relations.index.unchanged): one snapshot per block, edits seen after it."""

from __future__ import annotations

import threading

import pytest

from buildbench.scenes.model import Room, Scene, SceneObject
from buildbench.scenes.relations import index as index_mod
from buildbench.scenes.relations import near
from buildbench.scenes.relations.index import index_of, unchanged


def small_scene() -> Scene:
    def box(object_id: str, x: float) -> SceneObject:
        return SceneObject(object_id, object_id.split("-")[0], "", (x, 0.5, 1.0), (1.0, 1.0, 1.0), room_id="bedroom")

    return Scene(rooms=[Room("bedroom", [(0, 0), (0, 5), (5, 5), (5, 0)])], objects=[box("bed-0", 1.0), box("desk-0", 3.0)])


def test_a_held_scene_is_snapshotted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    scene = small_scene()
    taken = []
    real = index_mod.scene_snapshot
    monkeypatch.setattr(index_mod, "scene_snapshot", lambda s: taken.append(1) or real(s))
    with unchanged(scene):
        first = index_of(scene)
        for _ in range(5):
            assert near(scene, "bed-0", "desk-0").holds
            assert index_of(scene) is first
        with unchanged(scene):  # nested blocks share the outer one's index
            assert index_of(scene) is first
    assert len(taken) == 1
    index_of(scene)
    assert len(taken) == 2  # outside a block every call checks again


def test_an_edit_after_the_block_is_seen() -> None:
    scene = small_scene()
    with unchanged(scene):
        assert near(scene, "bed-0", "desk-0").value == pytest.approx(1.0)
    scene.objects[1].center = (4.0, 0.5, 1.0)
    assert near(scene, "bed-0", "desk-0").value == pytest.approx(2.0)
    with unchanged(scene):
        assert near(scene, "bed-0", "desk-0").value == pytest.approx(2.0)


def test_a_block_builds_nothing_until_asked_and_a_bad_scene_fails_at_the_relation() -> None:
    scene = small_scene()
    scene.rooms[0].vertices = [(0, 0), (1, 1)]  # no area: the index cannot be built
    with unchanged(scene):
        pass  # entering and leaving raise nothing
    with unchanged(scene):
        for _ in range(2):  # and the failure is not remembered as an index
            with pytest.raises(ValueError, match="floor polygon"):
                near(scene, "bed-0", "desk-0")


def test_other_scenes_and_other_threads_are_not_held() -> None:
    held, other = small_scene(), small_scene()
    seen: list[bool] = []
    with unchanged(held):
        index_of(held)
        other.objects[1].center = (4.0, 0.5, 1.0)
        assert near(other, "bed-0", "desk-0").value == pytest.approx(2.0)
        held_index = index_of(held)

        def elsewhere() -> None:  # a thread that edits the scene sees its own edit
            held.objects[1].center = (4.5, 0.5, 1.0)
            seen.append(index_of(held) is not held_index)

        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
    assert seen == [True]
    assert near(held, "bed-0", "desk-0").value == pytest.approx(2.5)
