"""One measured pass of every hostile test: attacks tried, contained, hangs, tracebacks, data lost.

    .venv/bin/python tools/security_pass.py [--json OUT.json] [-k EXPR] [PATH ...]

Runs the security tests (`HOSTILE`: ``tests/security`` and the hostile tests of other areas) in
this process with ``-n 0`` (one at a time: the figures are for one machine, unshared by test
workers) and counts, per test case (one parametrized case is one attack or fault):

- ``tried``: cases that ran (a skip, e.g. no bwrap, is listed apart with its reason);
- ``contained``: cases that passed: each hostile test asserts that its attack got nowhere;
- ``hangs``: cases stopped by their timeout (pytest-timeout), or slower than ``--hang-s``;
- ``tracebacks``: cases whose failure, or whatever the product printed into the test's captured
  output, holds a raw Python traceback (the tests that drive a CLI assert there is none);
- ``data lost``: failed cases of the tests that assert nothing stored is lost (`DATA_TESTS`:
  stores, run lifetime, native crashes, the hostile run).

A case's attack is the first line of its docstring where it has one, else its test id. The
figures go to stdout as a table (and as JSON with ``--json``); the exit code is pytest's.
This is a developer tool: nothing of the package imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
#: The hostile tests: every attack and fault the hardening rounds tried, through the real paths.
HOSTILE = [
    "tests/security",
    "tests/web/test_security.py",
    "tests/cli/test_hostile_inputs.py",
    "tests/bimedit/test_hostile_files.py",
    "tests/harness/test_native_crash.py",
    "tests/harness/test_agent_failures.py",
]
#: Tests (module or ``module::name`` prefix) whose failure means stored data was lost.
DATA_TESTS = ("tests/security/test_stores.py", "tests/security/test_lifetime.py",
              "tests/harness/test_native_crash.py", "tests/security/test_hostile_model.py")
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)")


@dataclass
class Case:
    """How one test case ended."""

    nodeid: str
    attack: str
    outcome: str  # passed, failed, skipped
    duration_s: float = 0.0
    hang: bool = False
    traceback: bool = False
    data_test: bool = False
    detail: str = ""


@dataclass
class Figures:
    tried: int = 0
    contained: int = 0
    hangs: int = 0
    tracebacks: int = 0
    data_lost: int = 0
    skipped: int = 0
    wall_s: float = 0.0
    failures: list[str] = field(default_factory=list)
    skips: dict[str, int] = field(default_factory=dict)


def classify(cases: list[Case]) -> Figures:
    """The figures of a pass (module docstring)."""
    out = Figures()
    for case in cases:
        if case.outcome == "skipped":
            out.skipped += 1
            out.skips[case.detail] = out.skips.get(case.detail, 0) + 1
            continue
        out.tried += 1
        out.contained += case.outcome == "passed" and not case.hang and not case.traceback
        out.hangs += case.hang
        out.tracebacks += case.traceback
        if case.outcome != "passed":
            out.data_lost += case.data_test
            out.failures.append(f"{case.nodeid}: {case.detail}")
    return out


class Recorder:
    """A pytest plugin that keeps one `Case` per test case."""

    def __init__(self, hang_s: float) -> None:
        self.hang_s = hang_s
        self.cases: dict[str, Case] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        doc = (getattr(getattr(item, "function", None), "__doc__", None) or "").strip().splitlines()
        case = self.cases.setdefault(report.nodeid, Case(
            report.nodeid, doc[0] if doc else item.name, "passed",
            data_test=any(report.nodeid.startswith(prefix) for prefix in DATA_TESTS)))
        if report.when == "call":
            case.duration_s = report.duration
            case.hang = case.hang or report.duration > self.hang_s
        if report.skipped:
            case.outcome = "skipped"
            case.detail = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else "skipped"
            return
        if report.failed:
            case.outcome = "failed"
            text = str(report.longrepr)
            case.hang = case.hang or "Timeout" in text.split("\n", 1)[0] or "Failed: Timeout" in text
            crash = getattr(report.longrepr, "reprcrash", None)
            message = getattr(crash, "message", "") or text.strip()
            case.detail = (message.strip().splitlines() or ["failed"])[0][:300]
            # pytest prints a failing test's own frames without this header: a match is a traceback
            # the product printed and the test quoted (a CLI's stderr in an assertion message).
            case.traceback = case.traceback or bool(_TRACEBACK.search(report.longreprtext))
        printed = "".join(text for _, text in report.sections)
        case.traceback = case.traceback or bool(_TRACEBACK.search(printed))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help=f"test paths (default: {' '.join(HOSTILE)})")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression")
    parser.add_argument("--json", type=Path, help="write the figures and every case here")
    parser.add_argument("--hang-s", type=float, default=300.0, help="a case slower than this counts as a hang")
    args = parser.parse_args(argv)
    recorder = Recorder(args.hang_s)
    pytest_args = ["-p", "no:cacheprovider", "-n", "0", "-q", "-rN", *(args.paths or HOSTILE)]
    if args.keyword:
        pytest_args += ["-k", args.keyword]
    # As ``python -m pytest`` from the repository root: test modules pickle by their names
    # (``tests.…``), and the processes the tests start must be able to import them.
    os.chdir(REPO)
    sys.path.insert(0, str(REPO))
    started = time.monotonic()
    code = pytest.main(pytest_args, plugins=[recorder])
    figures = classify(list(recorder.cases.values()))
    figures.wall_s = round(time.monotonic() - started, 1)
    print(f"\nsecurity pass: {figures.tried} attacks tried, {figures.contained} contained, {figures.hangs} hangs, "
          f"{figures.tracebacks} tracebacks, {figures.data_lost} data lost; {figures.skipped} skipped; "
          f"{figures.wall_s:g} s")
    for reason, count in sorted(figures.skips.items()):
        print(f"  skipped {count}: {reason}")
    for failure in figures.failures:
        print(f"  not contained: {failure}")
    if args.json:
        args.json.write_text(json.dumps({"figures": asdict(figures),
                                         "cases": [asdict(c) for c in recorder.cases.values()]}, indent=1))
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
