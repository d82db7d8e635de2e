"""Room types, their essential furniture (with aliases) and the vocabulary that fits them.

The essential lists are the released reward's ``ROOM_TYPE_ESSENTIAL_OBJECTS`` (spec §4.3);
the vocabularies (what else belongs in such a room) are ours, for the rule-based judge.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: room type → (patterns naming it, {essential: aliases}).
ESSENTIALS: dict[str, tuple[tuple[str, ...], dict[str, tuple[str, ...]]]] = {
    "bedroom": (
        ("bedroom", "bed room"),
        {
            "bed": ("bed", "double bed", "single bed", "queen bed", "king bed", "twin bed"),
            "wardrobe": ("wardrobe", "closet", "armoire", "clothes cabinet"),
            "nightstand": ("nightstand", "bedside table", "night table", "bedside cabinet"),
        },
    ),
    "living room": (
        ("living room", "livingroom", "living-room", "lounge"),
        {
            "sofa": ("sofa", "couch", "sectional", "loveseat"),
            "coffee table": ("coffee table", "center table"),
            "tv stand": ("tv stand", "tv cabinet", "tv unit", "entertainment center", "media console"),
        },
    ),
    "study room": (
        ("study room", "studyroom", "study-room", "study"),
        {
            "desk": ("desk", "office desk", "writing desk", "work desk", "study desk"),
            "chair": ("chair", "office chair", "desk chair", "swivel chair"),
            "bookshelf": ("bookshelf", "bookcase", "book shelf", "shelving unit"),
        },
    ),
    "office": (
        ("office", "home office", "work room", "workroom"),
        {
            "desk": ("desk", "office desk", "writing desk", "work desk", "executive desk"),
            "chair": ("chair", "office chair", "desk chair", "executive chair"),
            "filing cabinet": ("filing cabinet", "file cabinet", "storage cabinet", "drawer unit"),
        },
    ),
    "gym": (
        ("gym", "fitness room", "workout room", "exercise room", "home gym"),
        {
            "cardio machine": (
                "treadmill",
                "running machine",
                "exercise bike",
                "elliptical",
                "stationary bike",
                "rowing machine",
            ),
            "weight equipment": (
                "weight bench",
                "bench press",
                "power rack",
                "squat rack",
                "cable machine",
                "smith machine",
                "lat pulldown",
                "leg press",
                "multi-gym",
            ),
        },
    ),
    "dining room": (
        ("dining room", "diningroom", "dining-room", "dining"),
        {
            "dining table": ("dining table", "dinner table", "eating table"),
            "dining chair": ("dining chair", "chair"),
            "sideboard": ("sideboard", "buffet", "credenza", "cabinet"),
        },
    ),
    "entertainment room": (
        (
            "entertainment room",
            "entertainment",
            "game room",
            "gaming room",
            "home theater",
            "home theatre",
            "media room",
            "music room",
            "billiard room",
            "playroom",
        ),
        {},
    ),
}

#: Things that fit any room.
COMMON_WORDS = (
    "lamp",
    "light",
    "rug",
    "carpet",
    "plant",
    "painting",
    "picture",
    "art",
    "mirror",
    "clock",
    "vase",
    "curtain",
    "shelf",
    "cabinet",
    "chandelier",
    "pendant",
    "sconce",
    "decor",
    "stool",
    "bench",
    "ottoman",
    "side table",
    "console",
    "storage",
    "basket",
    "cushion",
    "frame",
    "chair",
)
#: Further things that fit each room type.
ROOM_WORDS: dict[str, tuple[str, ...]] = {
    "bedroom": (
        "dresser",
        "chest",
        "desk",
        "armchair",
        "vanity",
        "tv",
        "bookshelf",
        "bookcase",
        "sofa",
        "crib",
        "footstool",
    ),
    "living room": (
        "armchair",
        "tv",
        "television",
        "bookshelf",
        "bookcase",
        "sideboard",
        "end table",
        "fireplace",
        "piano",
        "chaise",
    ),
    "study room": ("lamp", "filing cabinet", "armchair", "bookcase", "whiteboard", "sofa", "printer"),
    "office": ("bookshelf", "bookcase", "whiteboard", "printer", "sofa", "meeting table", "locker"),
    "gym": ("dumbbell", "mat", "yoga", "kettlebell", "locker", "punching bag", "bike", "rack"),
    "dining room": ("table", "bar", "wine", "china", "hutch", "buffet"),
    "entertainment room": (
        "sofa",
        "tv",
        "television",
        "speaker",
        "console",
        "billiard",
        "pool table",
        "piano",
        "arcade",
        "bar",
        "projector",
        "armchair",
        "table",
        "bean bag",
    ),
}


def match_room_type(text: str) -> str | None:
    """The room type of :data:`ESSENTIALS` whose pattern ``text`` mentions first in table order."""
    low = text.lower().strip()
    for room, (patterns, _) in ESSENTIALS.items():
        if any(p in low for p in patterns):
            return room
    return None


def mentions(desc: str, words: Iterable[str]) -> bool:
    """Whether ``desc`` contains one of ``words`` at the start of a word."""
    low = desc.lower()
    return any(re.search(r"\b" + re.escape(w), low) for w in words)


def essentials_of(room_type: str) -> dict[str, tuple[str, ...]]:
    room = match_room_type(room_type)
    return dict(ESSENTIALS[room][1]) if room else {}


def missing_essentials(room_type: str, descs: Iterable[str]) -> list[str]:
    """Essentials of ``room_type`` no description names by one of its aliases."""
    descs = list(descs)
    return [
        name
        for name, aliases in essentials_of(room_type).items()
        if not any(mentions(d, aliases) for d in descs)
    ]


def fits_room(desc: str, room_type: str) -> bool:
    """Whether an object fits the room type (always, for an unknown room type)."""
    room = match_room_type(room_type)
    if room is None:
        return True
    words = [a for aliases in ESSENTIALS[room][1].values() for a in aliases]
    return mentions(desc, (*words, *ROOM_WORDS[room], *COMMON_WORDS))
