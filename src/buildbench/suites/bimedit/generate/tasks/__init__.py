"""BIM-Edit task generation: base edits with oracle code, three phrasings each, verified descriptions.

* :mod:`.code` — oracle code templates (IfcOpenShell in the agent tool's namespace);
* :mod:`.recipes` / :mod:`.creates` — choose targets and phrase update/delete/create edits;
* :mod:`.oracle` — run oracle code like the tool does and make ground truths byte-stable;
* :mod:`.split` — the paper's 324-task composition, the demo split, any number more.
"""

from buildbench.suites.bimedit.generate.tasks.oracle import (
    apply_and_write,
    run_oracle,
    score_oracle,
    tool_namespace,
    write_oracle_prediction,
)
from buildbench.suites.bimedit.generate.tasks.split import (
    BASE_COUNTS,
    generate_demo,
    generate_split,
    generate_tasks,
)

__all__ = ["BASE_COUNTS", "apply_and_write", "generate_demo", "generate_split", "generate_tasks", "run_oracle",
           "score_oracle", "tool_namespace", "write_oracle_prediction"]
