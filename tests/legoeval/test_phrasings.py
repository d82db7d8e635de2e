"""Count sentences as people write them, beyond the generator's own templates."""

from __future__ import annotations

import pytest

from buildbench.suites.legoeval.constraints.text import TextError, parse


@pytest.mark.parametrize("text,category,cmp,n", [
    ("There are 3 chairs in the living room.", "chair", "eq", 3),
    ("There are two chairs in the dining room.", "chair", "eq", 2),
    ("There is one sofa in the living room.", "sofa", "eq", 1),
    ("There are at least 2 lamps in the bedroom.", "lamp", "ge", 2),
    ("There are no rugs in the bedroom.", "rug", "eq", 0),
    ("There is no rug in the bedroom.", "rug", "eq", 0),
])
def test_counts(text: str, category: str, cmp: str, n: int) -> None:
    program = parse(text)
    assert (program.of.category, program.cmp, program.n) == (category, cmp, n)


def test_a_sentence_outside_the_grammar_is_named() -> None:
    with pytest.raises(TextError, match="matches no template"):
        parse("The room feels cosy and warm.")
