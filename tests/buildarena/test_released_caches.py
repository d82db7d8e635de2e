"""What the released profile keeps instead of working out again (caption coordinates, method
signatures, normalized answers) answers exactly as working it out does."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from buildbench.suites.buildarena.library.released import ReleasedAssembly, ReleasedMachine, ReleasedWorkbench
from buildbench.suites.buildarena.library.released.agreement import normalize
from buildbench.suites.buildarena.library.released.machine import method_signature
from buildbench.suites.buildarena.library.released.parts import coordinates, to_real

VECTORS = [[0.0, -0.0, 1.0], [1e-9, -1e-9, 2.5], [np.nan, np.inf, -np.inf], [1e8, 3.14159, -2.0],
           [123456.789, 0.004999, 0.005], [-0.0, -0.0, -0.0], [1e300, -1e-300, 7.0]]


@pytest.mark.parametrize("precision, separator", [(2, ","), (3, ", ")])
def test_kept_coordinates_print_as_numpy_prints_them(precision: int, separator: str) -> None:
    for values in VECTORS:
        virtual = np.array(values, dtype=np.float64)
        expected = np.array2string(to_real(virtual), precision=precision, separator=separator, suppress_small=True)
        for _ in range(2):  # the second answer comes from the kept texts
            assert coordinates(virtual, precision, separator) == expected, values


def test_other_print_options_and_other_dtypes_are_printed_afresh() -> None:
    virtual = np.array([1.23456, 0.0, 2.0])
    default = coordinates(virtual)
    with np.printoptions(sign="+"):
        assert coordinates(virtual) == np.array2string(to_real(virtual), precision=2, separator=",",
                                                       suppress_small=True) != default
    assert coordinates(virtual) == default
    ints = np.array([1, 2, 3])
    assert coordinates(ints) == np.array2string(to_real(ints), precision=2, separator=",", suppress_small=True)


@pytest.mark.parametrize("kind", [ReleasedMachine, ReleasedAssembly])
def test_method_signatures_are_inspects(kind: type[ReleasedMachine]) -> None:
    machine = kind()
    for name in ("start", "attach_block_to", "twist_block", "shift_block", "to_file", "remove_block",
                 *(("add_machine", "shift_machine", "rotate_machine") if kind is ReleasedAssembly else ())):
        method = getattr(machine, name)
        assert method_signature(method) == inspect.signature(method), name
        assert method_signature(method) is method_signature(getattr(kind(), name))  # kept per function


def test_a_wrong_argument_is_refused_in_inspects_words() -> None:
    bench = ReleasedWorkbench()
    try:
        inspect.signature(bench.machine.start).bind(nonsense=1)
    except TypeError as exc:
        expected = f"TypeError: {exc}"
    assert bench.call("start", {"nonsense": 1}).text == expected


def test_normalize_answers_alike_when_asked_again() -> None:
    text = "Position: [ 1.23456, -0.0004 ,3.]\nOverlapping detected between <ID 2> b\nOverlapping detected between <ID 1> a"
    fresh = normalize.__wrapped__(text)  # the function itself, nothing kept
    assert "1.235" in fresh and fresh.index("<ID 1>") < fresh.index("<ID 2>")
    hits = normalize.cache_info().hits
    assert normalize(text) == normalize(text) == fresh
    assert normalize.cache_info().hits >= hits + 1
