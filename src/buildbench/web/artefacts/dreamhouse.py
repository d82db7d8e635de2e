"""DreamHouse: the timber frame, each member coloured by the validator's verdict."""

from __future__ import annotations

import numpy as np

from buildbench.harness.episode import Episode
from buildbench.harness.episode_outcome import episode_outcome

from . import Artefact, ArtefactContext, no_outcome

#: Member names listed in one finding's text before "and N more".
_NAMED = 12


def frame_artefact(episode: Episode, context: ArtefactContext) -> Artefact:
    """Members as oriented boxes (Blender frame, z up); failing members red and named.

    The stored structure is validated again under the episode's profile, so every member
    a failing test names is marked, not only the ones the agent's feedback had room for.
    """
    from buildbench.suites.dreamhouse.check.validate import validate
    from buildbench.suites.dreamhouse.env import structure_from_compact
    from buildbench.suites.dreamhouse.outcome import DreamHouseOutcome

    art = Artefact("frame", up="z")
    outcome = episode_outcome(episode, DreamHouseOutcome)
    if outcome is None:
        return no_outcome(art, episode)
    compact = outcome.structure
    if not compact.get("names"):
        art.notes.append("the episode left no members")
        return art
    structure = structure_from_compact(compact)
    profile = outcome.profile or "paper"
    report = validate(structure, profile)
    failing: dict[str, list[str]] = {}
    for result in report.results:
        if result.passed:
            continue
        for name in result.members:
            failing.setdefault(name, []).append(result.name)
        shown = ", ".join(result.members[:_NAMED])
        more = f" and {len(result.members) - _NAMED} more" if len(result.members) > _NAMED else ""
        text = "\n".join(result.messages[:20]) or "(no message)"
        art.finding("fail", f"{result.label} failed", f"{text}\nmembers: {shown or '(none named)'}{more}",
                    list(result.members))
    sizes = np.asarray(compact["sizes_m"], dtype=np.float64).reshape(-1, 3)
    transforms = np.asarray(compact["transforms"], dtype=np.float64).reshape(-1, 3, 4)
    for i, name in enumerate(compact["names"]):
        tests = failing.get(name)
        label = f"{name} ({', '.join(tests)} failed)" if tests else name
        art.box(str(name), label, transforms[i, :, 3], sizes[i], transforms[i, :, :3],
                "fail" if tests else "pass")
    n_fail = sum(1 for b in art.boxes if b["status"] == "fail")
    art.summary = (f"{len(art.boxes)} members; validator ({profile} profile): "
                   + ("every test passes" if report.passed else
                      f"{len(report.failed)} test(s) failed ({', '.join(report.failed)}), {n_fail} member(s) named"))
    art.notes.append("verdicts recomputed from the stored members with the suite's validator")
    return art
