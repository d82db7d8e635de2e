"""The executor interface: run agent-written Blender Python in a sandbox, get the members back."""

from __future__ import annotations

import os
import secrets
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from buildbench.limits import limit
from buildbench.sandbox import Envelope, Isolation, Limits, Worker, field_problem
from buildbench.suites.dreamhouse.model import Structure, StructureFormatError, parse_document
from buildbench.suites.dreamhouse.model.parse import too_many_members

ExecStatus = Literal["ok", "error", "timeout", "memory", "limit", "killed", "crash"]
"""How a run ended: ``ok``; ``error`` (the script raised, including a syntax error or an
unsupported API in the fast executor; the scene keeps what the script did before the
error, as Blender would); ``timeout``/``memory``/``limit``/``killed``/``crash`` (the sandbox
stopped the process: the scene is lost and the next run starts from a fresh one)."""


@dataclass(frozen=True)
class ExecResult:
    """The outcome of one script run.

    Attributes:
        status: See `ExecStatus`.
        members: The scene's mesh objects after the run, each as the released harness's
            exporter writes it: ``{name, location, dimensions, bbox_world_corners,
            matrix_world}`` (metres, 6 decimals, matrix row-major). Empty when the
            process was lost, or when the run was `refused`.
        stdout: What the script (and Blender) printed.
        error: ``"ExcType: message"`` or what stopped the run; None when ok.
        traceback: The script's traceback (frames of ``<agent code>``), or None.
        duration_s: Wall seconds of the run, seen from the harness.
        stderr: What went to stderr.
        scene_lost: True when the scene held before this run was lost (the run started
            in a fresh process after a timeout or crash, or this run killed it).
        cpu_s: CPU seconds the executing process (the sandboxed child, or Blender) spent
            on the script and the export; None when the process was lost.
        refused: Why the scene's members were refused unexported (more than the
            ``house_members`` limit: counted in the process, so no record of them is built),
            in `parse_document`'s words; `structure` raises it. None when they were exported.
    """

    status: ExecStatus
    members: list[dict[str, Any]] = field(default_factory=list)
    stdout: str = ""
    error: str | None = None
    traceback: str | None = None
    duration_s: float = 0.0
    stderr: str = ""
    scene_lost: bool = False
    cpu_s: float | None = None
    refused: str | None = None

    @property
    def ok(self) -> bool:
        """True when the script ran to the end."""
        return self.status == "ok"

    def submission(self) -> dict[str, Any]:
        """The released harness's submission document ``{"members": [...]}``.

        Raises:
            StructureFormatError: When the members were `refused`.
        """
        if self.refused is not None:
            raise StructureFormatError(self.refused)
        return {"members": list(self.members)}

    def structure(self) -> Structure:
        """The members as a DreamHouse `Structure`, read by the released rules.

        Like the released validator, each member becomes a box of ``dimensions`` centred
        on its ``matrix_world`` origin; a mesh whose origin is not its centre (after
        ``transform_apply(location=True)``) is therefore placed where the released
        harness would place it.

        Raises:
            StructureFormatError: When the members were `refused` or an exported one is malformed.
        """
        return parse_document(self.submission())


#: Longest error text and traceback a run reports (both ends kept): the script chooses its
#: exception's message, and the error goes into the agent's next observation and the episode log.
MAX_ERROR_CHARS = 5_000
MAX_TRACEBACK_CHARS = 20_000


def _clip(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - 2 * half} characters cut] ...\n{text[-half:]}"


#: What a run's reply holds (see `_child_hooks`), and the types each field may have.
_REPLY_FIELDS: dict[str, tuple[type, ...]] = {
    "status": (str,), "members": (list,), "error": (str, type(None)), "traceback": (str, type(None)),
    "cpu_s": (int, float, type(None)), "over_limit": (int,),
}


def _reply_problem(reply: Any, most: int) -> str | None:
    """What is wrong with the shape of a run's reply (asked to refuse more than ``most`` members), or
    None. The members themselves are checked when the env reads them as a structure (each problem
    named per member)."""
    problem = field_problem(reply, _REPLY_FIELDS)
    if problem is not None:
        return problem
    if reply.get("status") not in ("ok", "error"):
        return f"status {reply.get('status')!r} is neither 'ok' nor 'error'"
    if "members" not in reply:
        return "no field 'members'"
    over = reply.get("over_limit")
    if over is not None and (over <= most or reply["members"]):
        return f"'over_limit' {over} with {len(reply['members'])} members exported (limit {most})"
    return None


#: What of buildbench the sandbox shows an executor's process (see `Worker`'s ``modules``): the
#: executors and the modules they import, never the task generators or the verifier.
SANDBOX_MODULES = (
    "buildbench.suites.dreamhouse.executors", "buildbench.suites.dreamhouse.model", "buildbench.geometry",
    "buildbench.harness.errors", "buildbench.errors", "buildbench.inputs", "buildbench.jsonio", "buildbench.lazy",
    "buildbench.limits",
)


def _discard(path: Path) -> None:
    """Remove a file the harness asked the sandboxed process to write (whatever it made there instead stays)."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


class Executor:
    """Runs scripts against one persistent scene in a sandboxed worker.

    The scene persists across `run` calls (the paper's retries); `reset` starts a fresh
    factory scene; `close` ends the worker. Each script runs in a fresh namespace, as a
    new ``blender --python`` script would. Use as a context manager.
    """

    kind: str = ""

    def __init__(
        self,
        *,
        setup: str,
        inputs: dict[str, Any],
        limits: Limits,
        isolation: Isolation = "auto",
        readable: tuple[str, ...] = (),
    ) -> None:
        """Prepare the worker (it starts on the first run); ``readable``: host paths the
        sandbox must see besides our own interpreter (another one that it starts)."""
        self.limits = limits
        self._worker = Worker(setup=setup, inputs=inputs, limits=limits, isolation=isolation, readable=readable,
                              modules=SANDBOX_MODULES)

    def __enter__(self) -> Executor:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def run(self, code: str) -> ExecResult:
        """Run ``code`` against the current scene and export the scene's members."""
        if not isinstance(code, str):
            raise TypeError(f"{type(self).__name__}.run(): code must be a str, got {type(code).__name__}")
        most = limit("house_members")
        return self._result(self._worker.call(f"result = __run__({code!r}, {most})"), most)

    def save_scene(self, folder: Path) -> Path | None:
        """Save the whole scene (the released harness's ``.blend``; the fake scene for ``fast``) to a
        new file in ``folder``, a folder of the harness outside the work folder; None when it
        cannot be saved (the agent put something in it that does not save, or broke its process).

        The process writes the file into the work folder, where the agent's code can reach it; it
        is taken out before any agent code runs again, and only a plain file of one link (not a
        link to something else the agent could change later) is kept. Its content is never read
        by the harness, only handed to a sandboxed process by `load_scene`.
        """
        name = f".buildbench-scene-{secrets.token_hex(8)}"
        inside = self._worker.workdir / name
        if not self._worker.call(f"result = __save__({name!r})").ok:
            _discard(inside)
            return None
        try:
            fd = os.open(inside, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            _discard(inside)
            return None
        try:
            info = os.fstat(fd)
            if not (stat.S_ISREG(info.st_mode) and info.st_nlink == 1):
                return None
            target = folder / name
            with open(fd, "rb", closefd=False) as source, target.open("xb") as copy:
                shutil.copyfileobj(source, copy)
            return target
        finally:
            os.close(fd)
            _discard(inside)

    def load_scene(self, saved: Path) -> ExecResult:
        """Replace the scene by one `save_scene` wrote and export its members (no script runs)."""
        name = f".buildbench-scene-{secrets.token_hex(8)}"
        inside = self._worker.workdir / name
        with saved.open("rb") as source, inside.open("xb") as copy:  # "x": never through a link the agent made
            shutil.copyfileobj(source, copy)
        inside.chmod(0o644)  # the sandbox's own uid reads it
        most = limit("house_members")
        try:
            return self._result(self._worker.call(f"result = __load__({name!r}, {most})"), most)
        finally:
            _discard(inside)

    def _result(self, envelope: Envelope, most: int) -> ExecResult:
        """A run's (or a load's) result from the worker's envelope; ``most``: the member limit it was given."""
        lost = envelope.worker_restarted
        if not envelope.ok:
            return self._failed(envelope, lost)
        problem = _reply_problem(envelope.result, most)
        if problem is not None:
            # The script rewrote its process's reporting (it runs there): that process is the
            # agent's now, so it is discarded, and the run fails naming what came back.
            self._worker.reset()
            return ExecResult(
                status="crash",
                stdout=envelope.stdout,
                error=f"{self.kind} executor: the script's process sent a malformed reply: {problem}",
                duration_s=envelope.duration_s,
                stderr=envelope.stderr,
                scene_lost=True,
            )
        reply = envelope.result
        over = reply.get("over_limit")
        return ExecResult(
            status=reply["status"],
            members=list(reply["members"]),
            stdout=envelope.stdout,
            error=_clip(reply.get("error"), MAX_ERROR_CHARS),
            traceback=_clip(reply.get("traceback"), MAX_TRACEBACK_CHARS),
            duration_s=envelope.duration_s,
            stderr=envelope.stderr,
            scene_lost=lost,
            cpu_s=reply.get("cpu_s"),
            refused=None if over is None else too_many_members(over, most),
        )

    def _failed(self, envelope: Envelope, lost: bool) -> ExecResult:
        """A run the sandbox stopped (or whose setup failed): no members, the scene is gone."""
        status: ExecStatus = "error" if envelope.status == "ok" else envelope.status
        error = envelope.error or "the sandbox returned no result"
        if envelope.status == "timeout":
            error = f"{error} (limit {self.limits.wall_s:g} s wall, {self.limits.cpu_s} s CPU)"
        last_words = envelope.stderr.strip().splitlines()[-1:] if envelope.status == "crash" else []
        if last_words:
            error = f"{error}: {last_words[0]}"
        return ExecResult(
            status=status,
            stdout=envelope.stdout,
            error=_clip(f"{self.kind} executor: {error}", MAX_ERROR_CHARS),
            traceback=envelope.traceback,
            duration_s=envelope.duration_s,
            stderr=envelope.stderr,
            scene_lost=True if status != "error" else lost,
        )

    def running(self) -> bool:
        """Whether the process holding the scene still runs (False before the first run and once it was lost)."""
        return self._worker.running()

    def restart(self) -> None:
        """Discard the process (and everything earlier scripts did to it); the next run starts a fresh one."""
        self._worker.reset()

    def reset(self) -> None:
        """Discard the scene; the next run starts from Blender's factory scene.

        The factory scene is reloaded inside the running process (cheap); if that fails,
        the process itself is replaced.
        """
        if not self._worker.call("__reset__()").ok:
            self._worker.reset()

    def close(self) -> None:
        """Stop the worker and free its resources."""
        self._worker.close()
