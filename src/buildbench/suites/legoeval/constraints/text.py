"""A template grammar between programs and English sentences, both ways.

:func:`render` writes one sentence per program; :func:`parse` reads such sentences back
(``parse(render(p)) == p`` for every program the grammar covers). Sentences, by program:

* count: ``There is a red sofa in the living room.`` (``ge 1``), ``There is no rug in the
  bedroom.`` (``eq 0``), ``There are exactly 2 chairs in the dining room.``
  (``exactly``/``at least``/``at most``/``more than``/``fewer than``).
* attribute: ``The sofa in the living room is red and made of leather.`` -- the subject's
  determiner is the quantifier: ``The`` (all), ``A``/``An`` (exists), ``At least 2``… (count).
* relation: ``The sofa in the living room is near the tv.``, ``faces``, ``is to the left
  of``, ``is against a wall``, ``is between the X and the Y``, ``is closer to the X than to
  the Y``, ``can be reached from a door`` (see :data:`RELATION_PHRASES`); rooms: ``The kitchen is adjacent to the hall.``,
  ``The bedroom is larger than the office.``
* material: ``The floor of the bedroom is wood.``, ``The walls of the bedroom are blue.``,
  ``A wall of the kitchen is brick.``, ``The north wall of the office is white.``
* layout: ``The house has a kitchen.``, ``The house has exactly 4 rooms.``, ``The house has
  at least 2 bedrooms.``, ``The bedroom has an area between 9 and 16 square metres.``,
  ``There is a door between the kitchen and the outside.``, ``The door between the kitchen and
  the hall can open freely.``, ``The bedroom has a window on its north wall.``

Noun phrases are ``[shape] [colour] [material] category [in the ROOM]``; adjectives are
told apart by the catalogue's vocabulary (colour words, materials and families, shapes).
A sentence outside the grammar raises :class:`TextError` naming the sentence.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .program import (
    DIRECTIONS,
    PATH_RELATIONS,
    TERNARY_RELATIONS,
    UNARY_RELATIONS,
    Attribute,
    Count,
    Layout,
    Material,
    Program,
    ProgramError,
    Quant,
    Relation,
    RoomRelation,
    Selector,
)


class TextError(ProgramError):
    """A sentence is outside the template grammar."""


#: Relation name -> (singular verb phrase, plural verb phrase).
RELATION_PHRASES: dict[str, tuple[str, str]] = {
    "same_direction": ("faces the same direction as", "face the same direction as"),
    "in_middle": ("is in the middle of its room", "are in the middle of their room"),
    "against_wall": ("is against a wall", "are against a wall"),
    "in_corner": ("is in a corner", "are in a corner"),
    "left_of": ("is to the left of", "are to the left of"),
    "right_of": ("is to the right of", "are to the right of"),
    "in_front_of": ("is in front of", "are in front of"),
    "on_top_of": ("is on top of", "are on top of"),
    "closer_than": ("is closer to", "are closer to"),
    "aligned": ("is aligned with", "are aligned with"),
    "far": ("is far from", "are far from"),
    "between": ("is between", "are between"),
    "behind": ("is behind", "are behind"),
    "under": ("is under", "are under"),
    "near": ("is near", "are near"),
    "facing": ("faces", "face"),
    "reachable": ("can be reached from a door", "can be reached from a door"),
}
ROOM_PHRASES: dict[str, str] = {"adjacent_rooms": "is adjacent to", "larger_room": "is larger than"}
CMP_WORDS: dict[str, str] = {"eq": "exactly", "ge": "at least", "le": "at most", "gt": "more than",
                             "lt": "fewer than"}
_WORD_CMPS = {v: k for k, v in CMP_WORDS.items()}
_CMP_RE = "|".join(CMP_WORDS.values())
_IRREGULAR = {"shelf": "shelves", "bookshelf": "bookshelves", "knife": "knives", "leaf": "leaves"}


@lru_cache(maxsize=1)
def vocabulary() -> dict[str, frozenset[str]]:
    """Adjective words by attribute, from the catalogue (colours, asset materials and
    material families, shapes) plus the category names."""
    from buildbench.scenes.catalogue import COLOURS, MATERIALS, default_catalogue

    cat = default_catalogue()
    assets = [a for c in cat.categories() for a in cat.by_category(c)]
    return {
        "color": frozenset(COLOURS) | {v[2] for v in MATERIALS.values()},
        "material": frozenset(a.material for a in assets) | {v[1] for v in MATERIALS.values()},
        "shape": frozenset(a.shape for a in assets),
        "category": frozenset(cat.categories()),
    }


# --- words ----------------------------------------------------------------------------------
def plural(noun: str) -> str:
    """English plural of a (possibly multi-word) noun: only the head (last word) changes."""
    *rest, head = noun.split(" ")
    if head in _IRREGULAR:
        head = _IRREGULAR[head]
    elif head.endswith(("s", "x", "z", "ch", "sh")):
        head += "es"
    elif head.endswith("y") and head[-2:-1] not in tuple("aeiou"):
        head = head[:-1] + "ies"
    else:
        head += "s"
    return " ".join([*rest, head])


def singular(noun: str) -> str:
    """Inverse of :func:`plural`: the candidate that re-pluralises to ``noun``, preferring a
    known category."""
    *rest, head = noun.split(" ")
    cands = [k for k, v in _IRREGULAR.items() if v == head]
    if head.endswith("ies"):
        cands.append(head[:-3] + "y")
    if head.endswith("es"):
        cands.append(head[:-2])
    if head.endswith("s"):
        cands.append(head[:-1])
    full = [" ".join([*rest, c]) for c in cands if plural(c) == head]
    known = [c for c in full if c in vocabulary()["category"]]
    if known or full:
        return (known or full)[0]
    raise TextError(f"{noun!r} is not a plural noun")


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# --- rendering ------------------------------------------------------------------------------
def noun_phrase(sel: Selector, *, many: bool = False) -> str:
    """``[shape] [colour] [material] category [ 'id'] [in the ROOM]`` without determiner."""
    cat = sel.category or "object"
    words = [w for w in (sel.shape, sel.color, sel.material) if w] + [plural(cat) if many else cat]
    text = " ".join(words)
    if sel.id is not None:
        text += f" '{sel.id}'"
    if sel.room is not None:
        text += f" in the {sel.room}"
    return text


def _subject(sel: Selector, quant: Quant) -> tuple[str, bool]:
    """The subject phrase and whether its verb is plural."""
    if quant.kind == "count":
        assert quant.cmp is not None and quant.n is not None
        many = quant.n != 1
        return f"{CMP_WORDS[quant.cmp]} {quant.n} {noun_phrase(sel, many=many)}", many
    np_ = noun_phrase(sel)
    return (f"the {np_}" if quant.kind == "all" else f"{_article(np_)} {np_}"), False


def _render_count(p: Count) -> str:
    if p.cmp == "ge" and p.n == 1:
        np_ = noun_phrase(p.of)
        return f"There is {_article(np_)} {np_}."
    if p.cmp == "eq" and p.n == 0:
        return f"There is no {noun_phrase(p.of)}."
    many = p.n != 1
    return f"There {'are' if many else 'is'} {CMP_WORDS[p.cmp]} {p.n} {noun_phrase(p.of, many=many)}."


def _render_attribute(p: Attribute) -> str:
    subject, many = _subject(p.of, p.quant)
    parts = [f"made of {v}" if k == "material" else v for k, v in p.attrs.items()]
    return f"{_cap(subject)} {'are' if many else 'is'} {' and '.join(parts)}."


def _render_relation(p: Relation) -> str:
    subject, many = _subject(p.a, p.quant)
    verb = RELATION_PHRASES[p.rel][1 if many else 0]
    if p.params:
        raise TextError(f"relation {p.rel!r} with threshold overrides has no template sentence")
    if p.rel in UNARY_RELATIONS + PATH_RELATIONS:
        return f"{_cap(subject)} {verb}."
    assert p.b is not None
    if p.rel == "between":
        assert p.c is not None
        return f"{_cap(subject)} {verb} the {noun_phrase(p.b)} and the {noun_phrase(p.c)}."
    if p.rel == "closer_than":
        assert p.c is not None
        return f"{_cap(subject)} {verb} the {noun_phrase(p.b)} than to the {noun_phrase(p.c)}."
    return f"{_cap(subject)} {verb} the {noun_phrase(p.b)}."


def _render_material(p: Material) -> str:
    if p.surface == "floor":
        return f"The floor of the {p.room} is {p.value}."
    if p.direction is not None:
        det = "The" if p.quant == "all" else "A"
        return f"{det} {p.direction} wall of the {p.room} is {p.value}."
    if p.quant == "all":
        return f"The walls of the {p.room} are {p.value}."
    return f"A wall of the {p.room} is {p.value}."


def _render_layout(p: Layout) -> str:
    if p.kind == "room_exists":
        assert p.room is not None
        return f"The house has {_article(p.room)} {p.room}."
    if p.kind == "room_count":
        assert p.cmp is not None and p.n is not None
        noun = p.room_type or "room"
        return f"The house has {CMP_WORDS[p.cmp]} {p.n} {noun if p.n == 1 else plural(noun)}."
    if p.kind == "room_area":
        if p.min_m2 is not None and p.max_m2 is not None:
            span = f"between {_num(p.min_m2)} and {_num(p.max_m2)}"
        elif p.min_m2 is not None:
            span = f"of at least {_num(p.min_m2)}"
        else:
            assert p.max_m2 is not None
            span = f"of at most {_num(p.max_m2)}"
        return f"The {p.room} has an area {span} square metres."
    if p.kind in ("door_between", "door_opens"):
        r0, r1 = (("the outside" if r == "exterior" else f"the {r}") for r in p.rooms)
        if p.kind == "door_opens":
            return f"The door between {r0} and {r1} can open freely."
        return f"There is a door between {r0} and {r1}."
    assert p.cmp is not None and p.n is not None
    if p.cmp == "ge" and p.n == 1:
        count = "a window"
    elif p.cmp == "eq" and p.n == 0:
        count = "no window"
    else:
        count = f"{CMP_WORDS[p.cmp]} {p.n} window{'s' if p.n != 1 else ''}"
    where = f" on its {p.direction} wall" if p.direction else ""
    return f"The {p.room} has {count}{where}."


def render(program: Program) -> str:
    """One English sentence stating ``program``."""
    if isinstance(program, Count):
        return _render_count(program)
    if isinstance(program, Attribute):
        return _render_attribute(program)
    if isinstance(program, RoomRelation):
        return f"The {program.a} {ROOM_PHRASES[program.rel]} the {program.b}."
    if isinstance(program, Relation):
        return _render_relation(program)
    if isinstance(program, Material):
        return _render_material(program)
    return _render_layout(program)


# --- parsing --------------------------------------------------------------------------------
def parse_noun_phrase(text: str, where: str, *, many: bool = False) -> Selector:
    """Read ``[adjectives] category ['id'] [in the ROOM]`` (no determiner)."""
    text = text.strip()
    room = None
    m = re.match(r"^(.*?) in the (.+)$", text)
    if m:
        text, room = m.group(1).strip(), m.group(2).strip()
    ident = None
    m = re.match(r"^(.*?) '([^']+)'$", text)
    if m:
        text, ident = m.group(1).strip(), m.group(2)
    words = text.split()
    if not words:
        raise TextError(f"{where}: no object named in {text!r}")
    vocab = vocabulary()
    attrs: dict[str, str] = {}
    i = 0
    while i < len(words) - 1:  # the last word is always part of the category
        kind = next((k for k in ("shape", "color", "material") if words[i].lower() in vocab[k]), None)
        if kind is None or kind in attrs:
            break
        attrs[kind] = words[i].lower()
        i += 1
    category: str | None = " ".join(words[i:]).lower()
    if many and category is not None:
        category = singular(category)
    if category == "object" and ident is not None:
        category = None
    return Selector(category=category, room=room, id=ident, **attrs)


def _parse_subject(text: str, where: str) -> tuple[Selector, Quant]:
    t = text.strip()
    m = re.match(rf"^({_CMP_RE}) (\d+) (.+)$", t, re.IGNORECASE)
    if m:
        n = int(m.group(2))
        return (parse_noun_phrase(m.group(3), where, many=n != 1),
                Quant("count", _WORD_CMPS[m.group(1).lower()], n))
    m = re.match(r"^(the|every|each|an|a) (.+)$", t, re.IGNORECASE)
    if not m:
        raise TextError(f"{where}: subject {text!r} needs a determiner (the, a, every, exactly N…)")
    kind = "exists" if m.group(1).lower() in ("a", "an") else "all"
    return parse_noun_phrase(m.group(2), where), Quant(kind)


def _strip_the(text: str, where: str) -> str:
    m = re.match(r"^(?:the|an|a) (.+)$", text.strip(), re.IGNORECASE)
    if not m:
        raise TextError(f"{where}: expected 'the …' in {text!r}")
    return m.group(1)


def _parse_relation(s: str, where: str) -> Program | None:
    for rel, phrase in ROOM_PHRASES.items():
        m = re.match(rf"^the (.+?) {phrase} the (.+)$", s, re.IGNORECASE)
        if m:
            return RoomRelation(rel, m.group(1), m.group(2))
    for rel, (one, many) in RELATION_PHRASES.items():
        m = re.match(rf"^(.+?) (?:{re.escape(one)}|{re.escape(many)})(?: (.+))?$", s, re.IGNORECASE)
        if not m:
            continue
        a, quant = _parse_subject(m.group(1), where)
        rest = m.group(2)
        if rel in UNARY_RELATIONS + PATH_RELATIONS:
            if rest:
                break
            return Relation(rel, a, quant=quant)
        if not rest:
            raise TextError(f"{where}: relation {rel!r} needs an object after {one!r}")
        if rel in TERNARY_RELATIONS:
            sep = " and " if rel == "between" else " than to "
            if sep not in rest:
                raise TextError(f"{where}: relation {rel!r} needs '…{sep.strip()}…' in {rest!r}")
            b_text, c_text = rest.rsplit(sep, 1)
            return Relation(rel, a, parse_noun_phrase(_strip_the(b_text, where), where),
                            parse_noun_phrase(_strip_the(c_text, where), where), quant=quant)
        return Relation(rel, a, parse_noun_phrase(_strip_the(rest, where), where), quant=quant)
    return None


def _parse_attribute(s: str, where: str) -> Attribute | None:
    m = re.match(r"^(.+?) (?:is|are) ((?:made of )?[\w-]+(?: and (?:made of )?[\w-]+)*)$", s, re.IGNORECASE)
    if not m:
        return None
    vocab = vocabulary()
    attrs: dict[str, str] = {}
    for part in m.group(2).lower().split(" and "):
        if part.startswith("made of "):
            key, value = "material", part[len("made of "):]
        else:
            key = next((k for k in ("color", "shape") if part in vocab[k]), "")
            value = part
            if not key:
                return None
        if key in attrs:
            raise TextError(f"{where}: {key} given twice in {s!r}")
        attrs[key] = value
    sel, quant = _parse_subject(m.group(1), where)
    return Attribute(sel, attrs, quant)


#: Number words read in counts ("There are two chairs …"); digits work too.
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_NUMBER_RE = r"\d+|" + "|".join(_NUMBER_WORDS)


def _parse_count(s: str, where: str) -> Count | None:
    m = re.match(r"^there (is|are) no (.+)$", s, re.IGNORECASE)
    if m:
        return Count(parse_noun_phrase(m.group(2), where, many=m.group(1).lower() == "are"), "eq", 0)
    # A bare number ("There are 3 chairs …") asks for exactly that many, as an instruction means it.
    m = re.match(rf"^there (?:is|are) (?:({_CMP_RE}) )?({_NUMBER_RE}) (.+)$", s, re.IGNORECASE)
    if m:
        word = m.group(2).lower()
        n = int(word) if word.isdigit() else _NUMBER_WORDS[word]
        cmp = _WORD_CMPS[m.group(1).lower()] if m.group(1) else "eq"
        return Count(parse_noun_phrase(m.group(3), where, many=n != 1), cmp, n)
    m = re.match(r"^there is (?:an|a) (.+)$", s, re.IGNORECASE)
    if m and not m.group(1).lower().startswith("door between "):
        return Count(parse_noun_phrase(m.group(1), where), "ge", 1)
    return None


def _parse_material(s: str, where: str) -> Material | None:
    m = re.match(r"^the floor of the (.+) is (.+)$", s, re.IGNORECASE)
    if m:
        return Material(m.group(1), "floor", m.group(2).lower())
    m = re.match(r"^the walls of the (.+) are (.+)$", s, re.IGNORECASE)
    if m:
        return Material(m.group(1), "wall", m.group(2).lower())
    dirs = "|".join(DIRECTIONS)
    m = re.match(rf"^(the|an|a) (?:({dirs}) )?wall of the (.+) is (.+)$", s, re.IGNORECASE)
    if m:
        quant = "all" if m.group(1).lower() == "the" else "exists"
        if quant == "all" and m.group(2) is None:
            return None
        direction = m.group(2).lower() if m.group(2) else None
        return Material(m.group(3), "wall", m.group(4).lower(), direction, quant)
    return None


def _window_count(text: str) -> tuple[str, int] | None:
    t = text.lower()
    if t == "a window":
        return "ge", 1
    if t == "no window":
        return "eq", 0
    m = re.match(rf"^({_CMP_RE}) (\d+) windows?$", t)
    return (_WORD_CMPS[m.group(1)], int(m.group(2))) if m else None


def _parse_layout(s: str, where: str) -> Layout | None:
    for kind, pattern in (("door_between", r"^there is a door between (.+) and (.+)$"),
                          ("door_opens", r"^the door between (.+) and (.+) can open freely$")):
        m = re.match(pattern, s, re.IGNORECASE)
        if m:
            rooms = tuple("exterior" if r.lower() == "the outside" else _strip_the(r, where) for r in m.groups())
            return Layout(kind, rooms=rooms)
    m = re.match(rf"^the house has ({_CMP_RE}) (\d+) (.+)$", s, re.IGNORECASE)
    if m:
        n, noun = int(m.group(2)), m.group(3)
        # "1 rooms" (a slip a model makes) is still a count of rooms, not a room type "rooms"
        noun = noun if n == 1 and noun.lower() != "rooms" else singular(noun)
        return Layout("room_count", room_type=None if noun == "room" else noun,
                      cmp=_WORD_CMPS[m.group(1).lower()], n=n)
    m = re.match(r"^the house has (?:an|a) (.+)$", s, re.IGNORECASE)
    if m:
        return Layout("room_exists", room=m.group(1))
    num = r"(\d+(?:\.\d+)?)"
    m = re.match(rf"^the (.+) has an area (between {num} and {num}|of at least {num}|of at most {num}) "
                 r"square metres$", s, re.IGNORECASE)
    if m:
        g = m.groups()
        lo = g[2] or g[4]
        hi = g[3] or g[5]
        return Layout("room_area", room=g[0], min_m2=None if lo is None else float(lo),
                      max_m2=None if hi is None else float(hi))
    dirs = "|".join(DIRECTIONS)
    m = re.match(rf"^the (.+) has (.+? windows?)(?: on its ({dirs}) wall)?$", s, re.IGNORECASE)
    if m:
        count = _window_count(m.group(2))
        if count is None:
            raise TextError(f"{where}: cannot read the window count {m.group(2)!r}")
        return Layout("window_count", room=m.group(1), direction=m.group(3).lower() if m.group(3) else None,
                      cmp=count[0], n=count[1])
    return None


def parse(sentence: str, where: str = "constraint") -> Program:
    """The program a template sentence states.

    Raises:
        TextError: the sentence is outside the grammar (message names ``where``).
    """
    s = re.sub(r"\s+", " ", sentence.strip()).rstrip(".").strip()
    if not s:
        raise TextError(f"{where}: empty sentence")
    for reader in (_parse_layout, _parse_material, _parse_count, _parse_relation, _parse_attribute):
        program = reader(s, where)
        if program is not None:
            return program
    raise TextError(f"{where}: {sentence.strip()!r} matches no template sentence")
