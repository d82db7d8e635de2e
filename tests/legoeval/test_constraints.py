"""The typed constraint language: JSON and text round trips, validation errors, the LLM hook."""

from __future__ import annotations

import asyncio
import json

import pytest

from buildbench.llm import ScriptedChat
from buildbench.suites.legoeval.constraints import (
    Attribute,
    Count,
    Layout,
    Material,
    ProgramError,
    Quant,
    Relation,
    RoomRelation,
    Selector,
    TextError,
    constraint_type,
    parse,
    parse_program,
    program_to_json,
    render,
    translate,
)
from buildbench.suites.legoeval.constraints.text import plural, singular

S = Selector
PROGRAMS = [
    Count(S("chair", room="dining room"), "eq", 2),
    Count(S("sofa", room="living room", color="red"), "ge", 1),
    Count(S("rug", room="bedroom"), "eq", 0),
    Count(S("bookshelf"), "ge", 3),
    Count(S("dining table", shape="round", material="wood"), "lt", 2),
    Attribute(S("sofa", room="living room"), {"color": "red", "material": "leather"}, Quant("all")),
    Attribute(S("table", shape="round"), {"color": "white"}, Quant("exists")),
    Attribute(S("chair"), {"material": "wood"}, Quant("count", "ge", 2)),
    Attribute(S("sofa"), {"shape": "l-shaped"}, Quant("all")),
    Relation("near", S("sofa", room="living room"), S("tv")),
    Relation("far", S("bed"), S("door")),
    Relation("left_of", S("nightstand"), S("bed"), quant=Quant("all")),
    Relation("right_of", S("lamp"), S("sofa")),
    Relation("in_front_of", S("coffee table"), S("sofa")),
    Relation("behind", S("plant"), S("armchair")),
    Relation("facing", S("sofa"), S("tv"), quant=Quant("all")),
    Relation("on_top_of", S("tv"), S("tv stand")),
    Relation("under", S("rug"), S("coffee table")),
    Relation("aligned", S("chair"), S("desk")),
    Relation("same_direction", S("chair"), S("sofa")),
    Relation("against_wall", S("bed", room="bedroom"), quant=Quant("all")),
    Relation("in_corner", S("plant")),
    Relation("in_middle", S("rug"), quant=Quant("count", "ge", 2)),
    Relation("between", S("nightstand"), S("bed"), S("wardrobe")),
    Relation("closer_than", S("floor lamp"), S("bed"), S("door"), quant=Quant("count", "eq", 1)),
    Relation("near", S("chair", id="chair-0 (dining room)"), S("dining table")),
    RoomRelation("adjacent_rooms", "kitchen", "living room"),
    RoomRelation("larger_room", "bedroom 1", "office"),
    Material("bedroom", "floor", "wood"),
    Material("bedroom", "wall", "blue"),
    Material("bedroom", "wall", "brick", quant="exists"),
    Material("office", "wall", "white", "north"),
    Layout("room_exists", room="office"),
    Layout("room_count", cmp="eq", n=4),
    Layout("room_count", room_type="bedroom", cmp="ge", n=2),
    Layout("room_count", room_type="bathroom", cmp="eq", n=1),
    Layout("room_area", room="bedroom", min_m2=9.0, max_m2=16.5),
    Layout("room_area", room="bedroom", min_m2=9.0),
    Layout("room_area", room="bedroom", max_m2=12.25),
    Layout("door_between", rooms=("kitchen", "exterior")),
    Layout("door_between", rooms=("kitchen", "hall")),
    Layout("window_count", room="bedroom", direction="north", cmp="ge", n=1),
    Layout("window_count", room="bedroom", cmp="eq", n=0),
    Layout("window_count", room="bedroom", cmp="le", n=2),
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: render(p))
def test_text_and_json_round_trip(program: object) -> None:
    text = render(program)  # type: ignore[arg-type]
    assert parse(text) == program
    data = json.loads(json.dumps(program_to_json(program)))  # type: ignore[arg-type]
    assert parse_program(data) == program


def test_every_relation_and_layout_kind_is_covered() -> None:
    from buildbench.suites.legoeval.constraints import LAYOUT_KINDS, OBJECT_RELATIONS, ROOM_RELATIONS

    rels = {p.rel for p in PROGRAMS if isinstance(p, Relation | RoomRelation)}
    assert rels == set(OBJECT_RELATIONS) | set(ROOM_RELATIONS)
    assert {p.kind for p in PROGRAMS if isinstance(p, Layout)} == set(LAYOUT_KINDS)


def test_relation_names_match_the_scene_layer() -> None:
    from buildbench.scenes.relations import RELATIONS
    from buildbench.suites.legoeval.constraints import OBJECT_RELATIONS, ROOM_RELATIONS

    assert set(OBJECT_RELATIONS) | set(ROOM_RELATIONS) <= set(RELATIONS)


def test_types_follow_the_paper() -> None:
    assert constraint_type(Layout("room_exists", room="x")) == "FL"
    assert constraint_type(RoomRelation("adjacent_rooms", "a", "b")) == "FL"
    assert constraint_type(Material("x", "floor", "wood")) == "MS"
    assert constraint_type(Attribute(S("sofa"), {"color": "red"})) == "OS"
    assert constraint_type(Count(S("bed"), "ge", 1)) == "OP"  # existence is placement (spec 1.2)
    assert constraint_type(Relation("near", S("a"), S("b"))) == "OP"


@pytest.mark.parametrize(("program", "field"), [
    ({"op": "nope"}, "c3.op"),
    ([1, 2], "c3"),
    ({"op": "count", "of": {"room": "kitchen"}, "n": 1}, "c3.of"),
    ({"op": "count", "of": {"category": "bed"}, "n": -1}, "c3.n"),
    ({"op": "count", "of": {"category": "bed"}, "n": 1, "cmp": "about"}, "c3.cmp"),
    ({"op": "count", "of": {"category": "bed", "colour": "red"}, "n": 1}, "c3.of"),
    ({"op": "relation", "rel": "nearby", "a": {"category": "bed"}}, "c3.rel"),
    ({"op": "relation", "rel": "near", "a": {"category": "bed"}}, "c3.b"),
    ({"op": "relation", "rel": "in_corner", "a": {"category": "bed"}, "b": {"category": "x"}}, "c3.b"),
    ({"op": "relation", "rel": "between", "a": {"category": "a"}, "b": {"category": "b"}}, "c3.c"),
    ({"op": "relation", "rel": "near", "a": {"category": "a"}, "b": {"category": "b"}, "n": 2}, "c3.n"),
    ({"op": "relation", "rel": "near", "a": {"category": "a"}, "b": {"category": "b"},
      "params": {"max_m": float("inf")}}, "c3.params.max_m"),
    ({"op": "relation", "rel": "adjacent_rooms", "a": {"room": "k"}, "b": {"category": "x"}}, "c3.b"),
    ({"op": "attribute", "of": {"category": "sofa"}, "attrs": {}}, "c3.attrs"),
    ({"op": "attribute", "of": {"category": "sofa"}, "attrs": {"size": "big"}}, "c3.attrs"),
    ({"op": "material", "room": "kitchen", "surface": "ceiling", "value": "wood"}, "c3.surface"),
    ({"op": "material", "room": "kitchen", "surface": "floor", "value": "wood", "direction": "north"},
     "c3.direction"),
    ({"op": "material", "room": "", "surface": "floor", "value": "wood"}, "c3.room"),
    ({"op": "layout", "kind": "castle"}, "c3.kind"),
    ({"op": "layout", "kind": "room_area", "room": "k"}, "c3"),
    ({"op": "layout", "kind": "room_area", "room": "k", "min_m2": 9, "max_m2": 3}, "c3.min_m2"),
    ({"op": "layout", "kind": "room_area", "room": "k", "min_m2": float("nan")}, "c3.min_m2"),
    ({"op": "layout", "kind": "door_between", "rooms": ["a"]}, "c3.rooms"),
    ({"op": "layout", "kind": "window_count", "room": "k", "n": True}, "c3.n"),
])
def test_malformed_programs_name_the_field(program: object, field: str) -> None:
    with pytest.raises(ProgramError) as info:
        parse_program(program, "c3")
    message = str(info.value)
    assert message.startswith(field) and "\n" not in message


@pytest.mark.parametrize("sentence", [
    "", "The living room feels cosy.", "The sofa is near.", "A nightstand is between the bed.",
    "The house has many windows.", "The bedroom has several windows.", "The sofa is red and big.",
])
def test_sentences_outside_the_grammar_are_refused(sentence: str) -> None:
    with pytest.raises(TextError) as info:
        parse(sentence, "c1")
    assert str(info.value).startswith("c1")


def test_parser_accepts_variants_and_case() -> None:
    assert parse("every chair in the dining room faces the dining table") == Relation(
        "facing", S("chair", room="dining room"), S("dining table"), quant=Quant("all"))
    assert parse("An armchair is near a sofa.").quant == Quant("exists")  # type: ignore[union-attr]
    assert parse("The floor of the Living Room is WOOD.") == Material("Living Room", "floor", "wood")


def test_plural_and_singular_are_inverse_for_catalogue_categories() -> None:
    from buildbench.scenes.catalogue import default_catalogue

    for category in default_catalogue().categories():
        assert singular(plural(category)) == category
    assert plural("bookshelf") == "bookshelves" and plural("box") == "boxes" and plural("vase") == "vases"


def _reply(program: dict) -> str:
    return "Here it is:\n```json\n" + json.dumps(program) + "\n```"


def test_translate_prefers_the_template_and_never_calls_the_model() -> None:
    model = ScriptedChat([])
    result = asyncio.run(translate(model, "There is a bed in the bedroom."))
    assert result.source == "template" and result.program == Count(S("bed", room="bedroom"), "ge", 1)
    assert model.requests == []


def test_translate_retries_an_invalid_program_then_accepts_a_valid_one() -> None:
    bad = {"op": "relation", "rel": "near", "a": {"category": "sofa"}}
    good = {"op": "relation", "rel": "near", "a": {"category": "sofa"}, "b": {"category": "tv"}}
    model = ScriptedChat([_reply(bad), _reply(good)])
    result = asyncio.run(translate(model, "The couch sits close to the telly.", where="c2"))
    assert result.source == "model" and result.attempts == 2
    assert result.program == Relation("near", S("sofa"), S("tv"))
    assert "c2.b" in model.requests[1].messages[-1].text  # the validator's error went back


def test_translate_gives_up_with_one_line_naming_the_constraint() -> None:
    model = ScriptedChat(["no idea"] * 5)
    with pytest.raises(ProgramError) as info:
        asyncio.run(translate(model, "The vibe is nice.", where="c4", retries=1))
    assert str(info.value).startswith("c4") and "\n" not in str(info.value)
    assert len(model.requests) == 2


def test_translate_without_a_model_reports_the_grammar_error() -> None:
    with pytest.raises(TextError):
        asyncio.run(translate(None, "The vibe is nice."))


def test_one_rooms_is_a_count_of_rooms_not_a_room_type() -> None:
    from buildbench.suites.legoeval.constraints.text import parse

    assert parse("The house has exactly 1 rooms.") == parse("The house has exactly 1 room.") \
        == Layout("room_count", cmp="eq", n=1)
