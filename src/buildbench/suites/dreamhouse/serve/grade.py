"""Grading one submission with our validator, in the released result form.

A member list is read as the released export (``name``, ``dimensions``, ``matrix_world``,
``location``…) and validated under a profile (``released`` by default: the released
harness's 10 test names and semantics). A Blender script (our extension) first runs in our
sandboxed executor, from an empty scene, building into the collection named after the task
(``COLLECTION_NAME`` in the script is replaced by it, as the released quickstart does); its
exported members are then validated the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from buildbench.harness.errors import BuildbenchError

from ..check import validate
from ..model import Structure, parse_document
from .bodies import SubmitRequest

#: The placeholder the released agents write for the collection name.
COLLECTION_PLACEHOLDER = "COLLECTION_NAME"


class SubmissionError(ValueError):
    """A submission that cannot be graded (unreadable members, a failing script); the job fails with it."""


@dataclass(frozen=True)
class Grader:
    """Grades submissions.

    Attributes:
        profile: Validator profile (``released`` or ``paper``).
        executor: ``fast`` (our bpy) or ``blender`` for code submissions.
        isolation: Sandbox backend of the executor.
    """

    profile: str = "released"
    executor: str = "fast"
    isolation: str = "auto"

    def __call__(self, task_id: str, request: SubmitRequest) -> dict[str, Any]:
        """The released result dict of ``request`` for task ``task_id``.

        Raises:
            SubmissionError: With one line saying what could not be read or run.
        """
        if request.code is not None:
            structure = self.run_code(task_id, request.code)
        else:
            try:
                structure = parse_document({"members": request.members})
            except BuildbenchError as exc:
                raise SubmissionError(f"members: {exc}") from None
        return validate(structure, self.profile).to_released_json(task_id)

    def run_code(self, task_id: str, code: str) -> Structure:
        """The members ``code`` builds into the task's collection, from an empty scene."""
        from ..executors import make_executor

        try:
            executor = make_executor(self.executor, collection=task_id, isolation=self.isolation)
        except BuildbenchError as exc:
            raise SubmissionError(f"cannot run code here: {exc}") from None
        with executor:
            result = executor.run(code.replace(COLLECTION_PLACEHOLDER, task_id))
        if not result.ok:
            tail = (result.traceback or "").strip()[-1000:]
            raise SubmissionError(f"[ERROR] Blender failed: {result.error}" + (f"\n{tail}" if tail else ""))
        try:
            return result.structure()
        except BuildbenchError as exc:
            raise SubmissionError(f"exported members: {exc}") from None
