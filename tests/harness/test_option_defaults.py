"""Every declared ``-o`` default is the value the suite really uses when the option is absent.

The effective values come from the code, two ways: the suites' env, agent and protocol factories
built from the options parsed out of nothing (``suite.parse_options({})``), read back from what
they built, and a scan of any ``options.get("key", default)`` left in a suite's package (a literal,
or a module constant of the same file). An option that neither reaches must get a reader here, so
a new option cannot slip through unchecked.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from buildbench.harness import COMMON_OPTIONS, OptionSpec, Suite, get_suite, suite_names
from buildbench.harness.options import OptionValue

SUITES = ("bimedit", "buildarena", "dreamhouse", "example", "legoeval", "scenerevis")
HARNESS_DIR = Path(importlib.import_module("buildbench.harness").__file__ or "").parent
#: Numbers beyond these kinds' maxima would hang (timeouts, counts) or exhaust memory.
NUMERIC_KINDS = ("int", "float", "int-or-full", "float-or-none")
_UNRESOLVED = object()


# -- defaults found by running the suites' option readers on {} -------------------------------
def _first_task(suite: Suite) -> Any:
    return suite.load_tasks("demo", 0)[0]


def _degraded_fraction(suite: Suite) -> Any:
    # The degraded agents read the typed field as it is (no default of their own to disagree).
    return suite.parse_options({}).degrade


def _read_example(suite: Suite) -> dict[str, Any]:
    from buildbench.suites.example.protocols import refine

    task, options = _first_task(suite), suite.parse_options({})
    slow = suite.agent("slow-reference").factory(task, None, options)
    return {"max_steps": refine(task, options).max_steps, "delay_s": getattr(slow, "delay_s", None)}


def _read_dreamhouse(suite: Suite) -> dict[str, Any]:
    from buildbench.suites.dreamhouse.env import make_env
    from buildbench.suites.dreamhouse.protocols import TABLE6, budget_from_options, make_protocol

    options = suite.parse_options({})
    for name, budget in TABLE6.items():  # unset budget keys leave each protocol's Table 6 row
        assert budget_from_options(name, options) == budget, name
    visual = {make_protocol(name, options).require_visual for name in TABLE6}
    assert len(visual) == 1
    unset = dict.fromkeys(("step_retries", "global_retries", "max_actions", "revisions", "tau_retry"))
    env = make_env(_first_task(suite), options)
    fields = ("executor", "profile", "condition", "action_format", "isolation", "images", "renderer")
    # the degraded agent reads these typed fields as they are (degrade.degraded)
    return {**{name: getattr(env.options, name) for name in fields}, **unset, "require_visual": visual.pop(),
            "degrade": options.degrade, "degrade_mode": options.degrade_mode}


def _read_bimedit(suite: Suite) -> dict[str, Any]:
    from buildbench.suites.bimedit.env import make_env
    from buildbench.suites.bimedit.protocols import tool_loop

    task, options = _first_task(suite), suite.parse_options({})
    env, loop = make_env(task, options), tool_loop(task, options)
    fields = ("max_calls", "call_timeout_s", "memory_mb", "disk_mb", "max_output_chars", "action_format",
              "isolation", "reload_per_call", "strict")
    return {"retries": loop.retries, "retry_delay_s": loop.retry_delay_s, "degrade": _degraded_fraction(suite),
            **{name: getattr(env.options, name) for name in fields}}


def _read_buildarena(suite: Suite) -> dict[str, Any]:
    from buildbench.llm import ScriptedChat
    from buildbench.suites.buildarena.agents import llm
    from buildbench.suites.buildarena.protocols import workflow

    task, options = _first_task(suite), suite.parse_options({})
    env, flow, team = suite.make_env(task, options), workflow(task, options), llm(task, ScriptedChat([]), options)
    return {"max_shift": env.rules.max_shift, "degrade": _degraded_fraction(suite), "physics": env.physics.profile_name, "rounds": flow.rounds,
            "top_p": team.top_p, "levels": env.options.levels or None, "control": options.control,
            **{k: getattr(env.options, k) for k in ("sim_duration_s", "max_calls", "control_trials", "profile")},
            **{k: getattr(flow.options, k) for k in ("draft_turns", "build_turns", "max_substructures")}}


def _read_scenerevis(suite: Suite) -> dict[str, Any]:
    from buildbench.llm import ScriptedChat
    from buildbench.suites.scenerevis.env import make_env
    from buildbench.suites.scenerevis.protocols import diagnose_act

    task, options = _first_task(suite), suite.parse_options({})
    env, loop = make_env(task, options), diagnose_act(task, options)
    fields = ("max_turns", "render", "feedback", "retrieve", "retrieved_size", "optimize", "judge", "geometry",
              "eval_judge_record", "vlm_feedback", "vlm_feedback_record")
    assert loop.critic is None  # vlm_feedback "none": no critique model
    llm = suite.agent("llm").factory(task, ScriptedChat(), options)
    return {"address": env.address.value, "eval_judge": loop.eval_judge, "degrade": _degraded_fraction(suite),
            "max_model_len": getattr(llm, "max_model_len", None),
            **{name: getattr(env.options, name) for name in fields}}


def _read_legoeval(suite: Suite) -> dict[str, Any]:
    from buildbench.llm import ScriptedChat
    from buildbench.suites.legoeval.agents import llm, vlm_judge
    from buildbench.suites.legoeval.env import make_env
    from buildbench.suites.legoeval.protocols import evaluate

    task = _first_task(suite)
    options = suite.parse_options({})
    env = make_env(task, options)
    env.reset(task)
    tools = env.ctx  # the tools the env offers, as the options set them up
    pipeline, judge = llm(task, ScriptedChat([]), options), vlm_judge(task, ScriptedChat([]), options)
    evaluator = pipeline.evaluator
    return {"max_steps": evaluate(task, options).max_steps, "render": tools.render,
            "wall_midpoint_positions": tools.wall_midpoint_positions, "geometry": tools.geometry,
            "image_px": evaluator.image_px, "disable": ",".join(evaluator.disabled_groups),
            "constraints": pipeline.constraints,
            "plans": "reference" if pipeline.plans else "model",
            "per_constraint": judge.evaluator.per_constraint,
            "samples_per_judgment": judge.evaluator.samples, "degrade": _degraded_fraction(suite)}


READERS: dict[str, Callable[[Suite], dict[str, Any]]] = {
    "example": _read_example, "dreamhouse": _read_dreamhouse, "bimedit": _read_bimedit,
    "buildarena": _read_buildarena, "scenerevis": _read_scenerevis, "legoeval": _read_legoeval,
}


# -- defaults found in the source: options.get("key", default) --------------------------------
def _module_constants(tree: ast.Module) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and value is not None:
            try:
                out[target.id] = ast.literal_eval(value)
            except ValueError:
                pass
    return out


def _is_options(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name.endswith("options")


def _key_and_default(node: ast.Call) -> list[ast.expr] | None:
    """``[key, default?]`` of ``options.get(key[, default])`` or of a reader helper called as
    ``helper(options, key, default)``; None for any other call."""
    if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and _is_options(node.func.value):
        return list(node.args)
    if len(node.args) == 3 and _is_options(node.args[0]):
        return list(node.args[1:])
    return None


def _option_gets(path: Path) -> Iterator[tuple[str, Any]]:
    """(key, default) of each read of an option with a literal key in ``path``; a read without a
    default yields None, one whose default is no literal or same-file constant _UNRESOLVED."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = _module_constants(tree)
    for node in ast.walk(tree):
        args = _key_and_default(node) if isinstance(node, ast.Call) else None
        if not args or not isinstance(args[0], ast.Constant) or not isinstance(args[0].value, str):
            continue
        key = args[0].value
        default = args[1] if len(args) > 1 else None
        if default is None:
            yield key, None
        elif isinstance(default, ast.Constant):
            yield key, default.value
        elif isinstance(default, ast.Name) and default.id in constants:
            yield key, constants[default.id]
        else:
            yield key, _UNRESOLVED


def source_defaults(package_dirs: list[Path]) -> dict[str, list[Any]]:
    """Per key the resolved defaults its reads state; reads with an explicit default outrank bare
    ``options.get(key)`` (those also appear in error messages and truthiness tests)."""
    explicit: dict[str, list[Any]] = {}
    bare: set[str] = set()
    for folder in package_dirs:
        for path in sorted(folder.rglob("*.py")):
            for key, default in _option_gets(path):
                if default is None:
                    bare.add(key)
                elif default is not _UNRESOLVED:
                    explicit.setdefault(key, []).append(default)
    return {**{key: [None] for key in bare}, **explicit}


def _package_dir(suite: Suite) -> Path:
    package = ".".join(suite.make_env.__module__.split(".")[:3])  # buildbench.suites.NAME
    return Path(importlib.import_module(package).__file__ or "").parent


def effective(suite_name: str) -> dict[str, list[Any]]:
    """Every value the code of ``suite_name`` uses for each absent option."""
    suite = get_suite(suite_name)
    found = source_defaults([_package_dir(suite), HARNESS_DIR])
    for key, value in READERS[suite_name](suite).items():
        found.setdefault(key, []).append(value)
    return found


def _same(spec: OptionSpec, used: Any) -> bool:
    value: OptionValue = None if used is None else spec.parse(used)
    return value == spec.default and type(value) is type(spec.default)


# -- tests ------------------------------------------------------------------------------------
def test_the_registered_suites_are_the_ones_checked() -> None:
    assert set(SUITES) <= set(suite_names())


@pytest.mark.parametrize("suite_name", SUITES)
def test_declared_defaults_are_the_ones_used(suite_name: str) -> None:
    used = effective(suite_name)
    wrong, unchecked = [], []
    for spec in get_suite(suite_name).option_specs():
        if spec.name not in used:
            unchecked.append(spec.name)
            continue
        wrong += [f"{spec.name}: declared {spec.default!r}, used {value!r}"
                  for value in used[spec.name] if not _same(spec, value)]
    assert not wrong, f"{suite_name}: {wrong}"
    assert not unchecked, f"{suite_name}: no reader finds the default of {unchecked}; add one to READERS"


def test_common_options_are_unset_by_default() -> None:
    from buildbench.harness.llm_agent import llm_agent_options
    from buildbench.harness.option_model import ModelOptions

    # Unset common options pass nothing on: the agent's (or model client's) own values apply,
    # and an agent's own history is full (LLMAgent's default).
    assert llm_agent_options({}) == {} and ModelOptions().client_settings() == {}
    assert all(spec.default is None for spec in COMMON_OPTIONS)
    assert [s.name for s in COMMON_OPTIONS if s.unset == "" and s.kind != "int-or-full"] == []


def test_the_scan_sees_a_drifted_default(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('LIMIT = 7\n\ndef f(options):\n    return options.get("n", LIMIT), '
                                   'self.options.get("k", 2.5), options.get("f"), options.get("u", g()), '
                                   'flag(options, "b", True)\n')
    assert source_defaults([tmp_path]) == {"n": [7], "k": [2.5], "f": [None], "b": [True]}
    spec = OptionSpec("n", "int", default=6)
    assert not _same(spec, 7) and _same(OptionSpec("n", "int", default=7), 7)


@pytest.mark.parametrize("suite_name", SUITES)
def test_numeric_options_have_a_maximum(suite_name: str) -> None:
    specs = (*COMMON_OPTIONS, *get_suite(suite_name).option_specs())
    assert [s.name for s in specs if s.kind in NUMERIC_KINDS and s.maximum is None] == []


def test_bimedit_memory_is_bounded() -> None:
    spec = next(s for s in get_suite("bimedit").option_specs() if s.name == "memory_mb")
    assert spec.maximum == 65_536 and spec.parse(65_536) == 65_536
    with pytest.raises(Exception, match="memory_mb"):
        spec.parse(10**9)


def test_a_default_the_option_refuses_is_a_declaration_error() -> None:
    with pytest.raises(Exception, match="steps"):
        OptionSpec("steps", "int", minimum=1, default=0)
    with pytest.raises(ValueError, match="mode"):
        OptionSpec("mode", "int", default="3")


def test_listings_show_the_default() -> None:
    assert OptionSpec("n", "int", "things", minimum=1, default=3).describe() == "int >= 1: things (default 3)"
    assert OptionSpec("f", "bool", default=False).describe() == "bool (default false)"
    assert OptionSpec("x", "float", "cap", unset="no limit").describe() == "float: cap (default none: no limit)"
    assert OptionSpec("h", "int-or-full").describe() == "int or 'full' (default full)"
