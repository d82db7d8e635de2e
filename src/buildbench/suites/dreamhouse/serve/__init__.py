"""``buildbench dreamhouse serve``: the released DreamHouse harness's HTTP API, Blender-free.

Clients written for the released server (``examples/quickstart.py``, the pipeline scaffold,
one's own) talk to this one unchanged: same routes, JSON shapes, status codes and error
bodies. Tasks come from a split, task files or a ``.dhpack`` (:mod:`.tasks`); submissions are
validated by our validator off the request thread (:mod:`.jobs`, :mod:`.grade`); request
bodies are checked as the released request models check them (:mod:`.bodies`); the HTTP
layer is :mod:`.server`.

Example:
    >>> from buildbench.suites.dreamhouse.serve import ReleasedApiServer, load_source
    >>> with ReleasedApiServer(load_source(split="demo", limit=1)) as srv:  # doctest: +SKIP
    ...     requests.get(f"{srv.url}/v1/tasks").json()
    {'task_ids': ['CY_01_0000']}
"""

from .bodies import ApiError, SessionRequest, SubmitRequest
from .grade import Grader, SubmissionError
from .jobs import SESSION_TTL, JobBoard
from .options import SERVE_OPTIONS, ServeOptions
from .server import DEFAULT_HOST, DEFAULT_PORT, ReleasedApiServer
from .tasks import ServedTask, TaskSource, ViewsUnavailable, load_source

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "SERVE_OPTIONS",
    "SESSION_TTL",
    "ApiError",
    "Grader",
    "JobBoard",
    "ReleasedApiServer",
    "ServeOptions",
    "ServedTask",
    "SessionRequest",
    "SubmissionError",
    "SubmitRequest",
    "TaskSource",
    "ViewsUnavailable",
    "load_source",
]
