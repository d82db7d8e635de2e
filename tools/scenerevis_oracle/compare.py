"""Agreement of the importable ``buildbench`` with the recorded answers of the released code.

Prints one line per measure of ``README.md``'s table, using the replay and the verdicts of
``tests/scenerevis/test_original_agreement.py``::

    .venv/bin/python tools/scenerevis_oracle/compare.py

A package older than the released-mode fixes (no ``MAIN_GROUP`` in ``actions``) reads no
grouped scenes: each turn's scene is then given flat, and R_support is our own rules'.
"""

from __future__ import annotations

import inspect
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "scenerevis"))
import test_original_agreement as t  # noqa: E402

import buildbench.suites.scenerevis.actions as actions  # noqa: E402
from buildbench.suites.scenerevis.check import physics  # noqa: E402
from buildbench.suites.scenerevis.check.layout import parse_layout  # noqa: E402
from buildbench.suites.scenerevis.check.support import check_support  # noqa: E402
from buildbench.suites.scenerevis.reward import format as reply  # noqa: E402
from buildbench.suites.scenerevis.reward import support_reward  # noqa: E402

RELEASED_MODE = hasattr(actions, "MAIN_GROUP")


def share(ok: int, total: int) -> str:
    return f"{ok}/{total} ({100 * ok / total:.1f} %)" if total else "0/0"


def flat_before_steps() -> None:
    """Give each turn's scene flat, for a package that reads no grouped scenes."""
    step = t._env_step

    def flat_step(before: dict[str, Any], text: str) -> tuple[dict[str, Any], bool, bool, str]:
        room = {k: v for k, v in before.items() if k not in ("groups", "room_envelope")}
        return step({**room, **before["room_envelope"], "objects": t.flat_objects(before)}, text)

    t._env_step = flat_step  # type: ignore[assignment]


def turns() -> str:
    counts = t.verdicts()
    documented = sum(v for k, v in counts.items() if not k.startswith("disagree"))
    total = sum(counts.values())
    return f"turns: same scene {share(counts['agree'], total)}, or documented {share(documented, total)}; {dict(counts)}"


def contacts() -> str:
    rules = getattr(physics, "REWARD_RELEASED", physics.REWARD) if RELEASED_MODE else physics.REWARD
    same = total = 0
    for _, _, scene, theirs in t.physics_steps():
        ours = {(c.a, c.b): c.depth_m for c in physics.check_physics(parse_layout(scene), rules).contacts}
        recorded = {(a, b): d for a, b, d in theirs["pairs"]}
        same += ours.keys() == recorded.keys() and all(abs(ours[p] - d) <= 1e-6 for p, d in recorded.items())
        total += 1
    return f"physics: pairs and depths identical {share(same, total)} scenes"


def hints() -> str:
    same = total = 0
    for rec, before, k in t.edit_steps():
        step = rec["steps"][k]
        if step["physics"] is None or step["fault"][0] != "valid" or step["terminated"]:
            continue
        _, applied, _, text = t._env_step(before, step["reply"])
        if not applied:
            continue
        block = re.search(r"<feedback>\n(.*?)\n</feedback>", text, re.DOTALL)
        lines = block.group(1).splitlines() if block else []
        ours = next((line for line in lines if line.startswith("[Physics]")), "")
        same += t._split_feedback(ours)[0] == t._split_feedback(step["physics"]["feedback"])[0]
        total += 1
    return f"physics hint, collision part: {share(same, total)}"


def format_rewards() -> str:
    by_key = len(inspect.signature(reply.format_reward).parameters) == 3
    same = total = 0
    for rec, before, k in t.edit_steps():
        step = rec["steps"][k]
        objects = t.flat_objects(before)
        jids = {str(o["jid"]) for o in objects if o.get("jid")}
        uids = {str(o["uid"]) for o in objects if o.get("uid")}
        ours = reply.format_reward(step["reply"], jids, uids)[0] if by_key else reply.format_reward(
            step["reply"], jids | uids)[0]
        same += math.isclose(ours, step["format_reward"]["before"], abs_tol=1e-9)
        total += 1
    return f"format reward: {share(same, total)}"


def turn_zero() -> str:
    same = total = 0
    for rec in t.records():
        if rec["kind"] != "init":
            continue
        try:
            parsed: dict[str, Any] | None = actions.parse_create_scene(rec["reply"])
        except actions.ReplyError:
            parsed = None
        score = reply.init_reward(rec["reply"], rec["instruction"])[0]
        same += math.isclose(score, rec["format_reward"], abs_tol=1e-9) and parsed == rec["create_scene"]
        total += 1
    return f"turn 0 (r_init and the parsed room): {share(same, total)}"


def supports() -> str:
    ours_of: Callable[[dict[str, Any]], float] = lambda scene: support_reward(  # noqa: E731
        check_support(parse_layout(scene)).unsupported_pct)
    if RELEASED_MODE:
        from buildbench.suites.scenerevis.reward.released import released_support_reward

        ours_of = released_support_reward
    same = total = 0
    for _, _, scene, theirs in t.physics_steps():
        same += math.isclose(ours_of(scene), theirs["support"], abs_tol=1e-9)
        total += 1
    return f"R_support: {share(same, total)}"


def main() -> int:
    if not RELEASED_MODE:
        flat_before_steps()
    for measure in (turns, contacts, hints, format_rewards, turn_zero, supports):
        print(measure())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
