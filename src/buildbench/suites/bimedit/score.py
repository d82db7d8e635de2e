"""One BIM-Edit episode's metrics: ``score_edit`` (:mod:`.check.edit`) on the episode's last
committed model.

Paper metrics are the headline (``geometry``, ``semantics``, ``topology``, ``final``,
``solved``); the strict variant (ours) is always computed beside them (``strict_*``),
since one strict scoring yields both. With ``-o strict=true`` the strict values become the
headline and the paper's move to ``paper_*``.
"""

from __future__ import annotations

import base64
import tempfile
import zlib
from pathlib import Path

from buildbench.harness import Task
from buildbench.harness.errors import AgentFailure

from .check.bounded import TessellationOverrun
from .check.caps import over_caps
from .check.edit import score_edit
from .outcome import FAILURE_CLASSES, BimEditOutcome
from .tasks import from_harness

#: Score seed of the geometry sampler; fixed so a model always gets the same score.
SCORE_SEED = 0


def predicted_model(task: Task, outcome: BimEditOutcome, scratch: Path) -> Path:
    """The file to score: the committed model, or the input model when nothing was committed."""
    if outcome.model_path:
        return Path(outcome.model_path)
    if outcome.model_zb64:
        path = scratch / "committed.ifc"
        path.write_bytes(zlib.decompress(base64.b64decode(outcome.model_zb64)))
        return path
    return Path(from_harness(task).input_ifc)


def score(task: Task, outcome: BimEditOutcome) -> dict[str, float]:
    """Metrics of one episode (all floats, solved flags as 0/1)."""
    bim = from_harness(task)
    with tempfile.TemporaryDirectory(prefix="bimedit-score-") as scratch:
        pred = predicted_model(task, outcome, Path(scratch))
        # The committed model is the agent's output: past a cap it is refused before any scoring.
        over = over_caps(pred) if (outcome.model_path or outcome.model_zb64) and pred.is_file() else None
        if over is not None:
            raise AgentFailure(f"the committed model is over a cap: {over}")
        try:
            s = score_edit(bim.input_ifc, bim.ground_truth_ifc, pred, bim.score_spec(), strict=True,
                           seed=SCORE_SEED)
        except TessellationOverrun as exc:
            # the agent's model costing the kernel past its budget is its failure; a task model's
            # or a machine too slow to spend it is not
            if exc.machine or exc.path.resolve() != pred.resolve():
                raise RuntimeError(str(exc)) from exc
            raise AgentFailure(f"the committed model is over a limit: {exc}") from None
    paper = s.diagnostics.get("paper", {})
    p_topo = float(paper.get("topology", s.topology))
    p_final = float(paper.get("final", s.final))
    p_solved = float(bool(paper.get("solved", s.solved)))
    strict = bool(outcome.strict)
    out = {
        # Strict scoring zeroes every axis of a prediction that edits nothing; the paper's stay.
        "geometry": s.geometry if strict else float(paper.get("geometry", s.geometry)),
        "semantics": s.semantics if strict else float(paper.get("semantics", s.semantics)),
        "topology": s.topology if strict else p_topo,
        "final": s.final if strict else p_final,
        "solved": float(s.solved) if strict else p_solved,
        "strict_topology": s.topology,
        "strict_final": s.final,
        "strict_solved": float(s.solved),
        "collateral": float(len(s.diagnostics.get("collateral", []))),
        "tool_calls": float(outcome.tool_calls),
        "commits": float(outcome.commits),
    }
    if strict:
        out.update({"paper_topology": p_topo, "paper_final": p_final, "paper_solved": p_solved})
    failure = outcome.failure
    for kind in FAILURE_CLASSES:
        out[f"failure_{kind}"] = float(failure == kind)
    return out


def failure_metrics(task: Task) -> dict[str, float]:
    """The metrics of an episode the agent failed by its own output (``AgentFailure``, e.g. a
    committed model past the caps of `.check.caps`): every score 0, not solved."""
    keys = ("geometry", "semantics", "topology", "final", "solved", "strict_topology", "strict_final",
            "strict_solved")
    return dict.fromkeys(keys, 0.0)
