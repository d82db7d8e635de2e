"""Sessions and validation jobs of the released API, and the workers that run the jobs.

A session lives 6 hours (the released server keeps one 48 hours, up to no limit; with 10,000
such sessions one web page could lock every real client out for two days), at most
:data:`MAX_SESSIONS_PER_CLIENT` per client address and :data:`MAX_SESSIONS` in all, past which a
new one is refused with 429; each submission is one round and one job. Jobs run on a small thread pool, never on the request thread: a job is
``queued`` until a worker takes it, then ``running``, then ``complete`` (with the released
result dict) or ``failed`` (with an error message, as the released server reports a member
list its validator could not read). A job never raises out of its worker.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from .bodies import ApiError, SessionRequest, SubmitRequest

#: Session time to live (the released server's is 48 h): a long stepwise episode fits.
SESSION_TTL = timedelta(hours=6)
#: Jobs waiting for a worker before a submission is refused with 429.
MAX_PENDING_JOBS = 256
#: Sessions kept at once; expired ones go first, then new sessions are refused.
MAX_SESSIONS = 1_000
#: Live sessions of one client address (one agent opens one per task it works on).
MAX_SESSIONS_PER_CLIENT = 64


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


@dataclass(frozen=True)
class Session:
    """One session, as ``POST /v1/sessions`` answers it (times ISO 8601, UTC)."""

    session_id: str
    task_id: str
    model_id: str
    protocol: str
    created_at: datetime
    expires_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "task_id": self.task_id, "model_id": self.model_id,
                "protocol": self.protocol, "created_at": _iso(self.created_at),
                "expires_at": _iso(self.expires_at)}


@dataclass
class Job:
    """One submission's validation."""

    job_id: str
    session_id: str
    round: int
    status: str = "queued"
    results: dict[str, Any] | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The released ``GET …/results/{job_id}`` body."""
        return {"session_id": self.session_id, "job_id": self.job_id, "round": self.round,
                "status": self.status, "results": self.results, "error": self.error}


@dataclass
class _SessionState:
    session: Session
    client: str = ""
    rounds: int = 0
    jobs: list[str] = field(default_factory=list)


class JobBoard:
    """Sessions and jobs in memory, and the pool that validates submissions.

    Args:
        grade: ``grade(task_id, submission) -> released result dict``; raises ``ValueError``
            (or a subclass) with a message for a submission it cannot read.
        workers: Validation threads.
        now: The clock (tests move it to expire sessions).
    """

    def __init__(self, grade: Callable[[str, SubmitRequest], dict[str, Any]], *, workers: int = 2,
                 now: Callable[[], datetime] | None = None) -> None:
        self._grade = grade
        self._now = now or (lambda: datetime.now(UTC))
        self._sessions: dict[str, _SessionState] = {}
        self._jobs: dict[str, Job] = {}
        self._pending = 0
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dreamhouse-validate")

    def close(self) -> None:
        """Stop taking jobs; queued ones are dropped, running ones finish."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def open_session(self, request: SessionRequest, client: str = "") -> Session:
        """A new session of ``client`` (its address).

        Raises:
            ApiError: 429 when the client, or the server, holds the most live sessions.
        """
        created = self._now()
        session = Session(str(uuid.uuid4()), request.task_id, request.model_id, request.protocol,
                          created, created + SESSION_TTL)
        with self._lock:
            self._forget_expired(created)
            mine = sum(1 for st in self._sessions.values() if st.client == client)
            if mine >= MAX_SESSIONS_PER_CLIENT:
                raise ApiError(429, f"this client holds {mine} live sessions, the most one client may; "
                                    f"sessions expire {SESSION_TTL.total_seconds() / 3600:g} h after they open")
            if len(self._sessions) >= MAX_SESSIONS:
                raise ApiError(429, f"too many open sessions ({MAX_SESSIONS}); try again when some expire")
            self._sessions[session.session_id] = _SessionState(session, client)
        return session

    def _forget_expired(self, now: datetime) -> None:
        for sid in [s for s, st in self._sessions.items() if st.session.expires_at < now]:
            state = self._sessions.pop(sid)
            for job_id in state.jobs:
                job = self._jobs.get(job_id)
                if job is not None and job.status in ("complete", "failed"):
                    del self._jobs[job_id]

    def submit(self, session_id: str, request: SubmitRequest) -> Job:
        """Queue a submission of a live session.

        Raises:
            ApiError: 404 for an unknown session, 410 for an expired one, 429 when too many
                jobs are waiting.
        """
        with self._lock:
            state = self._sessions.get(session_id)
            if state is None:
                raise ApiError(404, f"Session {session_id!r} not found")
            if state.session.expires_at < self._now():
                raise ApiError(410, "Session expired")
            if self._pending >= MAX_PENDING_JOBS:
                raise ApiError(429, f"{self._pending} validation jobs are waiting; poll your results and "
                                    "submit again later")
            state.rounds += 1
            job = Job(str(uuid.uuid4()), session_id, state.rounds)
            state.jobs.append(job.job_id)
            self._jobs[job.job_id] = job
            self._pending += 1
            task_id = state.session.task_id
        self._pool.submit(self._run, job, task_id, request)
        return job

    def result(self, session_id: str, job_id: str) -> dict[str, Any]:
        """The job's released result body.

        Raises:
            ApiError: 404 when the job is unknown or belongs to another session.
        """
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.session_id != session_id:
                raise ApiError(404, "Job not found")
            return job.to_json()

    def _run(self, job: Job, task_id: str, request: SubmitRequest) -> None:
        with self._lock:
            self._pending -= 1
            job.status = "running"
        try:
            results, error = self._grade(task_id, request), None
        except ValueError as exc:
            results, error = None, str(exc)
        except Exception as exc:  # noqa: BLE001 - a submission must never take the server down
            results, error = None, f"internal error: {type(exc).__name__}: {exc}"
        with self._lock:
            job.status = "failed" if error is not None else "complete"
            job.results, job.error = results, error
