"""`buildbench.jsonio`: integers past float range refused where the file is read, refusals placed
at the token that caused them, and the nesting check over bracket positions only."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from buildbench.jsonio import JSONInputError, _too_deep, finite_float, parse_json

FLOAT_MAX_INT = int(sys.float_info.max)  # 309 digits, the largest integer a float holds


def _refusal(text: str) -> JSONInputError:
    with pytest.raises(JSONInputError) as info:
        parse_json(text)
    return info.value


@pytest.mark.parametrize("literal", [str(FLOAT_MAX_INT + 10**292), "-" + str(FLOAT_MAX_INT + 10**292),
                                     "1" + "0" * 400, "9" * 4300])
def test_integer_past_float_range_is_refused_at_its_line_and_column(literal: str) -> None:
    # The same digits inside a string and as the tail of a longer number come first: the
    # position is the token's, not the first place the digits appear.
    text = '{\n  "note": "' + literal + '",\n  "x": 1.' + literal.lstrip("-") + ',\n  "n": [1, ' + literal + "]\n}"
    err = _refusal(text)
    digits = len(literal.lstrip("-"))
    assert err.msg == f"an integer of {digits} digits is out of the range of a finite number"
    assert (err.lineno, err.colno) == (4, 12)
    assert "line 4 column 12" in str(err)


def test_integers_a_float_holds_are_kept_exactly() -> None:
    assert parse_json(f"[{FLOAT_MAX_INT}, -{FLOAT_MAX_INT}, {2**64}]") == [FLOAT_MAX_INT, -FLOAT_MAX_INT, 2**64]
    assert all(isinstance(float(v), float) for v in parse_json(f"[{FLOAT_MAX_INT}, 0, -1]"))


def test_integer_over_the_digit_limit_keeps_its_message_and_gets_a_position() -> None:
    err = _refusal('["' + "9" * 5000 + '",\n ' + "9" * 5000 + "]")
    assert err.msg == "an integer of 5000 digits is over the 4300-digit limit"
    assert (err.lineno, err.colno) == (2, 2)


@pytest.mark.parametrize("text, msg, line, col", [
    ('{"a": "NaN",\n "b": NaN}', "NaN is not a finite number", 2, 7),
    ('{"a": "-Infinity", "b": [Infinity, -Infinity]}', "Infinity is not a finite number", 1, 26),
    ('{"1e999": "1e999", "b": 1e999}', "1e999 is out of the range of a finite number", 1, 25),
])
def test_non_finite_refusal_points_at_the_token(text: str, msg: str, line: int, col: int) -> None:
    err = _refusal(text)
    assert (err.msg, err.lineno, err.colno) == (msg, line, col)


def test_consumer_reads_a_huge_integer_as_one_input_error(tmp_path: Path) -> None:
    # BuildArena's machine reader did arithmetic on it: "error: OverflowError: int too large
    # to convert to float", an internal error, before parse_json refused it.
    block = {"id": "0", "type": "small_wooden_block", "position_virtual": [0, 0, 0],
             "rotation_virtual": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}
    text = json.dumps({"format": "buildbench.buildarena.machine/1", "blocks": [block]})
    machine = tmp_path / "machine.json"
    machine.write_text(text.replace("[0, 0, 0]", "[0, 0, 1" + "0" * 400 + "]"))
    out = subprocess.run([sys.executable, "-m", "buildbench", "buildarena", "simulate", str(machine),
                          "--task", "transport-1"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: "), out.stderr
    assert "an integer of 401 digits is out of the range of a finite number" in out.stderr
    assert "line 1, column" in out.stderr


def _depth_reference(raw: bytes, max_depth: int) -> int | None:
    """The rule, one byte at a time: depth over brackets outside strings, escapes skipped."""
    depth, in_string, escaped = 0, False, False
    for at, byte in enumerate(raw):
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in b"[{":
            depth += 1
            if depth > max_depth:
                return at
        elif byte in b"]}":
            depth -= 1
    return None


def _random_value(rng: random.Random, depth: int) -> object:
    roll = rng.random()
    if depth > 10 or roll < 0.3:
        return rng.choice([1, -2.5, None, True, "a[{", '"]}', "\\", "\\\\\"[", "x\\\"{{", "é[", ""])
    if roll < 0.65:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["k", "[", '\\"{']) + str(i): _random_value(rng, depth + 1) for i in range(rng.randint(0, 3))}


def test_depth_check_agrees_with_the_byte_by_byte_rule() -> None:
    rng = random.Random(5)
    cases = [b'["\\\\"', b'["\\\\\\"[[["]', b'{"a": "[[[[", "b": [[[1]]]}', b'"\\\\\\\\" [[[', b"[" * 9 + b"]" * 9]
    cases += [json.dumps(_random_value(rng, 0), ensure_ascii=rng.random() < 0.5).encode() for _ in range(3000)]
    for raw in cases:
        for max_depth in range(6):
            assert _too_deep(raw, max_depth) == _depth_reference(raw, max_depth), (raw, max_depth)


def test_depth_check_on_a_large_house(tmp_path: Path) -> None:
    # A 20,000-member house (about 8 MB, written here, not committed) whose strings are full
    # of brackets, quotes and backslashes: within the limit, and refused at the exact byte once
    # one member nests too deep.
    rng = random.Random(3)
    members = [{"name": f'Stud_{i} "[{{" \\', "size_m": [rng.random() for _ in range(3)],
                "matrix_world": [[rng.random() for _ in range(4)] for _ in range(4)],
                "supports": [f"Plate_{j}]" for j in range(6)]} for i in range(20_000)]
    path = tmp_path / "house.json"
    path.write_text(json.dumps({"members": members}))
    raw = path.read_bytes()
    assert len(raw) > 5_000_000
    # {"members": [{"matrix_world": [[ is 5 deep; "supports": [ 4.
    assert _too_deep(raw, 5) is None and _too_deep(raw, 200) is None
    assert _too_deep(raw, 4) == raw.index(b'"matrix_world": [[') + len(b'"matrix_world": [[') - 1
    assert len(parse_json(raw)["members"]) == 20_000
    deep = raw.replace(b'"supports": [', b'"supports": [[[[[[', 1).replace(b"]}", b"]]]]]]}", 1)
    assert _too_deep(deep, 9) is None
    assert _too_deep(deep, 8) == deep.index(b"[[[[[[") + 5
    with pytest.raises(JSONInputError, match="nested deeper than 8 levels") as info:
        parse_json(deep, max_depth=8)
    assert info.value.pos == len(deep[: deep.index(b"[[[[[[") + 5].decode())


@pytest.mark.parametrize("text", ['"' + "[" * 100_000, '["\\"' + "[" * 100_000, '["\\\\", ' + "[" * 100_000])
def test_unterminated_strings_and_escapes_never_reach_the_recursive_parser(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as info:
        parse_json(text)
    assert "nested deeper" in info.value.msg or "Unterminated string" in info.value.msg


@pytest.mark.parametrize("literal", ["1" + "0" * 210 + "e99", "-2" + "0" * 210 + ".5e98", "1E+309", "-1e309",
                                     "0.1e310", "1e0309", "1" + "0" * 309])
def test_every_shape_of_overflowing_number_is_refused(literal: str) -> None:
    err = _refusal("[1.5, " + literal + "]")
    assert "out of the range of a finite number" in err.msg and err.colno == 7


def test_numbers_read_as_json_reads_them_with_or_without_a_long_digit_run() -> None:
    # A document with a run of 200 digits anywhere (here in a string) has every number
    # checked; one without is read by json alone: the values are the same either way.
    rng = random.Random(11)
    numbers = [rng.choice([rng.random() * 10 ** rng.randint(-300, 300), rng.randint(-(2**70), 2**70), 1e-400, 0,
                           -0.0, 5e-324, sys.float_info.max, FLOAT_MAX_INT]) for _ in range(300)]
    plain = json.dumps({"n": numbers, "s": "1" * 199})
    checked = json.dumps({"n": numbers, "s": "1" * 200})
    for text in (plain, checked):
        got = parse_json(text)["n"]
        assert got == json.loads(text)["n"] and [type(v) for v in got] == [type(v) for v in numbers]


@pytest.mark.parametrize("text, problem", [("abc", "is not a number"), ("", "is not a number"),
                                           ("1,5", "is not a number"), ("nan", "is not finite"),
                                           ("-Infinity", "is not finite"), ("1e999", "is not finite")])
def test_finite_float_says_why_a_text_is_refused(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=f"^{problem}$"):
        finite_float(text)


def test_finite_float_reads_what_float_reads() -> None:
    assert [finite_float(t) for t in (" 2.5 ", "-0", "1e-400", "7")] == [2.5, 0.0, 0.0, 7.0]


@pytest.mark.parametrize("text, key, line, col", [
    ('{"a": 1, "b": {"c": 2, "c": 3}}', "c", 1, 24),
    # the same key in another object, in a string and as a value is no repeat; an escape is the same key
    ('[{"a": 1},\n {"x": "{\\"a\\": 1}", "y": "a", "a": 2, "\\u0061": 3}]', "a", 2, 40),
    ('{"k": [{"k": 1}, {"k": 2}],\n "k": 0}', "k", 2, 2),
])
def test_a_key_given_twice_is_refused_at_the_repeat_when_asked(text: str, key: str, line: int, col: int) -> None:
    with pytest.raises(JSONInputError) as info:
        parse_json(text, unique_keys=True)
    assert info.value.msg == f"key {key!r} given twice in one object"
    assert (info.value.lineno, info.value.colno) == (line, col)
    # An agent's reply is read as json.loads reads it (the last one wins): scores do not change.
    assert parse_json(text) == json.loads(text)
    assert parse_json('{"a": [1, {"a": 2}], "b": {"a": 3}}', unique_keys=True) == {"a": [1, {"a": 2}], "b": {"a": 3}}


@pytest.mark.parametrize("data, message, col", [
    ('{"a": 1}'.encode("utf-16"), "not UTF-8 text (it starts with a UTF-16 little-endian byte-order mark", 1),
    (b"\xfe\xff" + '{"a": 1}'.encode("utf-16-be"), "starts with a UTF-16 big-endian byte-order mark", 1),
    ('{"a": 1}'.encode("utf-32"), "starts with a UTF-32 little-endian byte-order mark", 1),
    ('{"a": 1}'.encode("utf-32-be"), "holds a NUL byte: UTF-16 or UTF-32 text without a byte-order mark", 1),
    ('{"a": 1}'.encode("utf-16-le"), "holds a NUL byte: UTF-16 or UTF-32 text without a byte-order mark", 2),
])
def test_utf16_and_utf32_bytes_are_refused_naming_the_encoding(data: bytes, message: str, col: int) -> None:
    with pytest.raises(JSONInputError) as info:
        parse_json(data)
    assert message in info.value.msg and info.value.colno == col
    assert parse_json(b"\xef\xbb\xbf" + b'{"a": 1}') == {"a": 1}  # UTF-8's own mark is dropped (RFC 8259 8.1)


def test_a_text_file_in_utf16_is_refused_naming_the_line(tmp_path: Path) -> None:
    from buildbench.inputs import InputFileError, iter_lines, read_text

    marked, bare = tmp_path / "marked.jsonl", tmp_path / "bare.jsonl"
    marked.write_bytes("{}\n{}\n".encode("utf-16"))
    bare.write_bytes(b"{}\n{}\n" + "{}\n".encode("utf-16-le"))
    with pytest.raises(InputFileError, match=r"not UTF-8 text \(line 1 starts with a UTF-16 little-endian byte-order"):
        read_text(marked)
    with pytest.raises(InputFileError, match=r"not UTF-8 text \(line 3 holds a NUL byte"):
        list(iter_lines(bare))


def test_a_huge_number_is_refused_in_the_time_its_bytes_take() -> None:
    # The refused literal was compiled into a regular expression to place it: 23 CPU s for a
    # 5·10⁶-digit integer (a server body); reading those bytes takes a few ms.
    import time

    for text in ("[" + "7" * 5_000_000 + "]", "[1.5, 1" + "0" * 2_000_000 + "e99]"):
        start = time.process_time()
        err = _refusal(text)
        assert err.colno == text.index("7" if "7" in text else "10") + 1
        assert time.process_time() - start < 2.0, err.msg


def test_refusal_placing_skips_many_longer_tokens_holding_the_literal() -> None:
    # 100,000 valid numbers end in the refused digits (as the fraction of a float, after a
    # sign or a point): each hit inside a longer token is passed over, in linear time.
    import time

    literal = "9" * 320
    decoys = ", ".join(f"{i}.{literal}" for i in range(100_000))
    text = f'{{"d": [{decoys}],\n "n": [-{literal}, {literal}]}}'
    start = time.process_time()
    err = _refusal(text)
    assert (err.lineno, err.colno) == (2, 8), err.msg
    assert time.process_time() - start < 5.0


def test_a_long_refused_number_is_shown_by_its_ends() -> None:
    literal = "1" + "0" * 3_000_000 + "e99"
    err = _refusal(f"[{literal}]")
    assert err.msg == f"1000000000000000…00000e99 (a number of {len(literal)} characters) is out of the range of a " \
                      "finite number" and err.colno == 2
    assert _refusal("[1e999]").msg == "1e999 is out of the range of a finite number"
