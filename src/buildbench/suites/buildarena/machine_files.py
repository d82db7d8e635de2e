"""Machine and task arguments of the ``buildbench buildarena`` commands: a machine from any of its
three file forms, a task id as a usage error when unknown. Below the command modules, so the
command groups (``cli``, ``calibration_cli``) and ``calibrate`` share them without a cycle.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from buildbench.inputs import read_bytes
from buildbench.jsonio import parse_json

from .model import Machine

if TYPE_CHECKING:
    from .tasks import TaskSpec

#: A machine file at the block limit is about 2 MB (5,000 blocks, a history of a few calls
#: each); anything far beyond is refused before it is parsed.
MAX_MACHINE_FILE_BYTES = 16 * 1024 * 1024


def read_machine_json(path: Path) -> Any:
    """A machine file's JSON; a gzip-compressed one (``machine.json.gz``) is read as its content."""
    try:
        raw = read_bytes(path, max_bytes=MAX_MACHINE_FILE_BYTES)
        if raw.startswith(b"\x1f\x8b"):
            raw = read_bytes(path, max_bytes=MAX_MACHINE_FILE_BYTES, gunzip=True)
        # A key given twice is refused (json.loads keeps the last silently): a hand-edited call
        # with two "face" keys would build a machine other readers of the file do not.
        return parse_json(raw, unique_keys=True)
    except OSError as exc:
        raise click.ClickException(f"cannot read {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        xml = _xml_refusal(path, raw)
        if xml is not None:
            raise click.ClickException(xml) from None
        raise click.ClickException(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None


def _xml_refusal(path: Path, raw: bytes) -> str | None:
    """The error for an XML file given as a machine (None when it is no XML), naming a Besiege
    ``.bsg``: the game's file holds block poses but not which face of which block each block is
    attached to, so no machine can be rebuilt from it without guessing its connections."""
    head = raw[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"<"):
        return None
    if b"<Machine" not in head:
        return f"{path} is XML, not a machine file (a history list, a machine document or an episode outcome, as JSON)"
    blocks = raw.count(b"<Block ")
    return (f"{path} is a Besiege .bsg machine ({blocks} block{'s' if blocks != 1 else ''}), which buildbench does not "
            "read: a .bsg records where blocks are, not which face joins which; give the build history it was "
            "made from (build_history.json), a machine document or an episode outcome")


def load_machine(path: Path, profile: str = "default") -> Machine:
    """A machine from any of the three file forms (see the module docstring).

    Args:
        profile: Library profile that replays a history list (``default`` or ``released``).

    Raises:
        click.ClickException: Unreadable file or unknown content, with the reason.
    """
    from .export import load_history, load_released_history
    from .outcome import OUTCOME_FORMAT, rebuild_outcome

    raw = read_machine_json(path)
    try:
        if isinstance(raw, list) or isinstance(raw, dict) and ("operation_history" in raw or "operations" in raw):
            text = json.dumps(raw)
            return load_released_history(text) if profile == "released" else load_history(text)
        if isinstance(raw, dict) and raw.get("format") == OUTCOME_FORMAT:
            _check_outcome(raw)
            machine = rebuild_outcome(raw)
            if machine is None:
                raise ValueError("the episode produced no machine")
            return machine
        if isinstance(raw, dict) and "format" in raw:
            return Machine.from_json(raw)
    except (ValueError, KeyError, TypeError) as exc:
        raise click.ClickException(f"{path}: {exc}") from None
    raise click.ClickException(
        f"{path}: expected a history list, a machine document or an episode outcome, got {type(raw).__name__}")


def _check_outcome(raw: dict[str, Any]) -> None:
    """The parts of an outcome its machine is rebuilt from, each named when malformed."""
    from .export import check_history
    from .library.replay import PROFILES
    from .model import Rules

    check_history(raw.get("machine", []), "outcome field 'machine'")
    machines = raw.get("machines", {})
    if not isinstance(machines, dict):
        raise ValueError(f"outcome field 'machines' must map machine ids to histories, got {type(machines).__name__}")
    for mid, history in machines.items():
        check_history(history, f"outcome field 'machines' entry {mid!r}")
    if raw.get("profile", "default") not in PROFILES:
        raise ValueError(f"outcome field 'profile' is {raw.get('profile')!r}, not one of {', '.join(PROFILES)}")
    rules = raw.get("rules", {})
    known = {f.name for f in fields(Rules)}
    if not isinstance(rules, dict) or not set(rules) <= known:
        raise ValueError(f"outcome field 'rules' must be an object of {', '.join(sorted(known))}")
    shift, blocks = rules.get("max_shift"), rules.get("max_blocks", 1)
    if (shift is not None and (type(shift) not in (int, float) or not 0 <= shift < float("inf"))
            or type(blocks) is not int or blocks < 1
            or not isinstance(rules.get("allow_disabled_blocks", False), bool)):
        raise ValueError(f"outcome field 'rules' holds a value of the wrong kind: {rules!r}"[:300])


def task_spec(task_id: str) -> TaskSpec:
    """The task ``--task`` names, one of the nine or a variant; a usage error (one line) otherwise."""
    from .tasks import get_task

    try:
        return get_task(task_id)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--task'") from None
