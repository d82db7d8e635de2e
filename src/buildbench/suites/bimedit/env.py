"""The BIM-Edit env: the paper's tool protocol over a persistent sandboxed IfcOpenShell worker.

Description:
    The agent gets the instruction and the path of its working copy of the model, and one
    tool, ``execute_ifc_code(code)``, whose code runs in a sandboxed worker process with
    ``ifc``, ``ifcopenshell``, ``api``, ``util``, ``element_util``, ``guid``, ``result`` and
    ``commit()`` bound (spec 1.3–1.4). With ``action_format="structured"`` it gets instead a
    small structured tool set (:mod:`.structured`) run in the same worker, for comparison.

Action space:
    Tool calls. Every call counts against the budget, malformed ones included; an action
    without tool calls is the agent's final answer.

Observation space:
    The instruction prompt, then one JSON envelope per tool call (status, result, stdout,
    stderr, error, traceback), clipped to ``max_output_chars``.

Episode end:
    ``terminated`` on the final answer; ``truncated`` when the agent asks for a call past the
    budget (failure class ``budget``). Timeouts, memory blow-ups and crashes of the worker
    are reported to the agent and the episode goes on in a fresh worker that reloads the
    last committed model.

Reward:
    0 for tool calls; on the step that ends the episode the paper's final score (``final``, in
    [0, 1]) of the last committed model (:mod:`.reward`).

Outcome:
    The last committed model (the only thing scored, spec 1.1) as a file under the
    episode's artifact folder, or embedded (zlib + base64) when the env has no folder; the
    failure class (``executed``, ``budget``, ``crash``, ``api``, ``timeout``, ``other``; spec
    3.7) and per-call statuses.

Arguments (``-o key=value``):
    :class:`~.options.BimEditOptions` (defaults and bounds there): ``max_calls``,
    ``call_timeout_s``, ``memory_mb``, ``disk_mb``, ``max_output_chars``, ``reload_per_call``
    (false: one worker keeps ``ifc`` and variables across calls; true: every call starts a
    fresh worker from the last commit, like the predecessor harness), ``action_format``
    (``code`` | ``structured``), ``strict`` (score in strict mode), ``isolation``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import shutil
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buildbench.harness import Action, Env, Observation, ResetResult, StepResult, Task
from buildbench.harness.env import control
from buildbench.harness.errors import ConfigError
from buildbench.harness.prompts import PromptFiles
from buildbench.llm import Tool, ToolCall
from buildbench.sandbox import Envelope, Limits, Worker
from buildbench.sandbox.files import AgentFileError, read_agent_file, remove_tree

from . import structured
from .options import BimEditOptions
from .outcome import FAILURE_CLASSES, BimEditOutcome
from .reward import final_reward
from .spaces import BimEditState
from .tasks import from_harness

PROMPTS = Path(__file__).with_name("prompts")
#: The replaceable prompt texts (``-o prompts=DIR``): ``system.md``, ``user.md`` (``str.format``
#: fields), ``code_tool.md`` (the tool's description).
PROMPT_FILES = PromptFiles(PROMPTS, fields=True)
CODE_TOOL = "execute_ifc_code"
SETUP_HOOK = "buildbench.suites.bimedit.namespace:setup"
#: What the sandbox shows of buildbench for the structured tools, whose snippets the harness writes
#: (no agent code runs): their operations import the generators and the verifier, so all of it.
STRUCTURED_MODULES = ("buildbench",)
MODEL_NAME = "model.ifc"
_CALL_FAILURES = {"timeout": "timeout", "memory": "crash", "limit": "crash", "killed": "crash", "crash": "crash"}


def code_tool() -> Tool:
    """The paper's single tool, described in our own words."""
    return Tool(name=CODE_TOOL, description=PROMPT_FILES.read("code_tool.md").strip(),
                parameters={"type": "object", "properties": {"code": {
                    "type": "string", "description": "Python source to run"}}, "required": ["code"]})


@dataclass
class CallRecord:
    """One tool call as the env saw it (kept in the outcome and the step info)."""

    tool: str
    status: str
    duration_s: float = 0.0
    committed: bool = False
    error: str | None = None


@dataclass
class _Failure:
    kind: str = "executed"
    detail: str = ""


@dataclass
class _Episode:
    workdir: Path
    model: Path
    worker: Worker
    committed_hash: str
    calls: list[CallRecord] = field(default_factory=list)
    failure: _Failure = field(default_factory=_Failure)
    final_text: str | None = None
    #: The bytes of the last commit, read safely once; the outcome writes these, never the path.
    committed_bytes: bytes | None = None
    #: Why the model file could not be read after the last call, if it could not.
    unreadable: str | None = None


#: Largest committed model the harness reads back from the agent's work folder.
MAX_MODEL_BYTES = 512 * 1024 * 1024


def _restore(path: Path, data: bytes) -> None:
    """Put ``data`` back at ``path`` whatever the agent left there, without following links;
    the new file belongs to the work folder's owner, so the sandbox can commit again."""
    if not remove_tree(path):  # any depth, never following links inside
        return  # the next read refuses it again; nothing of the host is touched
    owner = os.stat(path.parent, follow_symlinks=False)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchown(fd, owner.st_uid, owner.st_gid)
    finally:
        os.close(fd)


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _read_model(path: Path) -> bytes:
    """The agent-writable model, read without following links (see `read_agent_file`)."""
    return read_agent_file(path, max_bytes=MAX_MODEL_BYTES)


class BimEditEnv(Env):
    """One BIM-Edit task at a time (see the module docstring).

    Args:
        options: The run's options (the tool's settings are read from them; defaults: the paper's).
        output_dir: Where the committed model is kept for scoring; protocols set it to the
            episode's artifact folder before ``reset`` through the ``keep_model_in`` control.
            None embeds the model in the outcome.
    """

    state_type = BimEditState

    def __init__(self, options: BimEditOptions | None = None, output_dir: Path | None = None) -> None:
        self.options = options or BimEditOptions()
        self.output_dir = output_dir
        self.tools = [code_tool()] if self.options.action_format == "code" else structured.tools()
        self.task: Task | None = None
        self._ep: _Episode | None = None
        self._outcome: BimEditOutcome | None = None

    @control(name="keep_model_in", doc="keep the committed model in a folder (before reset)")
    def keep_model_in(self, folder: str) -> None:
        """Keep the committed model of the next outcome as ``folder``/committed.ifc instead of
        embedding it in the outcome."""
        self.output_dir = Path(folder)

    # -- episode ------------------------------------------------------------------------------
    def reset(self, task: Task, *, seed: int | None = None) -> ResetResult:
        self.close()
        view = from_harness(task)
        if not Path(view.input_ifc).is_file():
            raise ConfigError(f"task {task.id}: input model {view.input_ifc} does not exist")
        workdir = Path(tempfile.mkdtemp(prefix="bimedit-")).resolve()
        model = workdir / MODEL_NAME
        shutil.copyfile(view.input_ifc, model)
        limits = Limits(wall_s=self.options.call_timeout_s, cpu_s=max(1, math.ceil(self.options.call_timeout_s)),
                        memory_mb=self.options.memory_mb, disk_mb=self.options.disk_mb)
        # Agent code (the code format) sees only the hook's module of buildbench (see `Worker`).
        shown = STRUCTURED_MODULES if self.options.action_format == "structured" else ()
        worker = Worker(setup=SETUP_HOOK, inputs={"model": str(model)}, limits=limits, workdir=workdir,
                        isolation=self.options.isolation, modules=shown)
        self.task = task
        initial = model.read_bytes()
        self._ep = _Episode(workdir, model, worker, _digest(initial), committed_bytes=initial)
        self._outcome = None
        text = self._prompt(view.instruction, model)
        state = BimEditState(model_path=str(model), tools=[t.name for t in self.tools],
                             max_calls=self.options.max_calls).to_dict()
        return ResetResult(Observation(text=text, state=state), {"task_id": task.id})

    def _prompt(self, instruction: str, model: Path) -> str:
        if self.options.action_format == "structured":
            notes = structured.PROMPT_NOTES
        elif self.options.reload_per_call:
            notes = ("Every call starts from the model as last committed: variables and uncommitted "
                     "edits do not carry over to the next call.")
        else:
            notes = ("Variables, including ifc with any uncommitted edits, carry over from one call to "
                     "the next.")
        names = [t.name for t in self.tools]
        phrase = f"the tool {names[0]}" if len(names) == 1 else f"the tools {', '.join(names)}"
        return PROMPT_FILES.render("user.md", instruction=instruction.strip(), model_path=model, tools_phrase=phrase,
                                   tool_notes=notes,
                                   max_calls=self.options.max_calls, timeout_s=self.options.call_timeout_s).strip()

    def step(self, action: Action) -> StepResult:
        ep = self._require()
        calls = list(action.tool_calls)
        if not calls:
            ep.final_text = action.text or ""
            obs = Observation(text="Episode finished; the last committed model will be evaluated.",
                              state=self._state())
            return StepResult(obs, self._final_reward(), True, False, {"final": True, "calls": len(ep.calls)})
        answers: list[tuple[str, str]] = []
        records: list[dict[str, Any]] = []
        for call in calls:
            if len(ep.calls) >= self.options.max_calls:
                if ep.failure.kind == "executed":
                    ep.failure = _Failure("budget", f"the agent asked for call {len(ep.calls) + 1} "
                                                    f"with a budget of {self.options.max_calls}")
                answers.append((call.id, f"Not executed: the budget of {self.options.max_calls} tool calls "
                                         "is spent. The episode is over."))
                continue
            record, text = self._run_call(call)
            ep.calls.append(record)
            records.append(record.__dict__)
            answers.append((call.id, text))
        truncated = ep.failure.kind == "budget"
        info = {"calls": records, "calls_used": len(ep.calls)}
        if truncated:
            info["failure"] = "budget"
        text = "\n\n".join(t for _, t in answers)
        reward = self._final_reward() if truncated else 0.0
        return StepResult(Observation(text=text, tool_results=answers, state=self._state()), reward, False,
                          truncated, info)

    def _final_reward(self) -> float:
        """The paper's final score of the last committed model (the episode's ``final`` metric)."""
        ep = self._require()
        if self.task is None:  # reset sets both; _require has checked the episode
            raise RuntimeError("BimEditEnv: call reset(task) before step()")
        return final_reward(self.task, ep.committed_bytes, strict=self.options.strict)

    def _run_call(self, call: ToolCall) -> tuple[CallRecord, str]:
        ep = self._require()
        problem = self._malformed(call)
        if problem is not None:
            return CallRecord(call.name, "malformed", error=problem), json.dumps(
                {"status": "malformed", "error": problem})
        if self.options.action_format == "code":
            code = str(call.arguments["code"])
        else:
            code = structured.call_code(call.name, call.arguments)
        if self.options.reload_per_call:
            ep.worker.reset()
        envelope = ep.worker.call(code)
        committed = self._check_commit()
        failure = _CALL_FAILURES.get(envelope.status)
        if failure is not None and ep.failure.kind == "executed":
            ep.failure = _Failure(failure, f"tool call {len(ep.calls) + 1}: {envelope.status}: {envelope.error}")
        record = CallRecord(call.name, envelope.status, round(envelope.duration_s, 3), committed, envelope.error)
        return record, self._describe(envelope, committed)

    def _malformed(self, call: ToolCall) -> str | None:
        names = [t.name for t in self.tools]
        if call.name not in names:
            return f"unknown tool {call.name!r}; the tools are {', '.join(names)}"
        if call.parse_error:
            return f"the arguments are not a JSON object ({call.parse_error}); nothing was run"
        if self.options.action_format == "code":
            code = call.arguments.get("code")
            if not isinstance(code, str) or not code.strip():
                return "the argument 'code' must be a non-empty string of Python; nothing was run"
            return None
        return structured.check_arguments(call.name, call.arguments)

    def _check_commit(self) -> bool:
        ep = self._require()
        try:
            data = _read_model(ep.model)
        except AgentFileError as exc:
            # Deleted, replaced by a link, FIFO or device, or too large: the last good commit
            # stays what it was, the working copy is put back (a restarted worker would open
            # whatever the name points to), and the agent is told why this one does not count.
            ep.unreadable = f"{exc}; the model file was restored to your last commit"
            _restore(ep.model, ep.committed_bytes or b"")
            return False
        ep.unreadable = None
        digest = _digest(data)
        changed = digest != ep.committed_hash
        ep.committed_hash = digest
        if changed:
            ep.committed_bytes = data
        return changed

    def _describe(self, envelope: Envelope, committed: bool) -> str:
        out: dict[str, Any] = {"status": envelope.status, "result": envelope.result}
        for key in ("stdout", "stderr", "error", "traceback"):
            value = getattr(envelope, key)
            if value:
                out[key] = value
        if committed:  # the saved model differs from the previous save
            out["committed"] = True
        if self._require().unreadable:
            out["model_unreadable"] = self._require().unreadable
        if envelope.worker_restarted and not self.options.reload_per_call:
            out["note"] = ("the previous call killed the worker: this call ran in a fresh one, where ifc "
                           "was reloaded from the last commit and earlier variables are gone")
        if envelope.status == "timeout":
            out["note"] = f"stopped after the {self.options.call_timeout_s:g} s limit per call"
        text = json.dumps(out, default=str)
        limit = self.options.max_output_chars
        if len(text) > limit:
            text = text[: limit // 2] + f" … [{len(text) - limit} characters cut] … " + text[-limit // 2:]
        return text

    @control(name="record_failure", doc="note a failure seen outside the env (API errors)")
    def record_failure(self, kind: str, detail: str) -> None:
        """Note a failure seen outside the env (model API errors); the first one wins."""
        if kind not in FAILURE_CLASSES:
            raise ValueError(f"failure class must be one of {FAILURE_CLASSES}, got {kind!r}")
        ep = self._require()
        if ep.failure.kind == "executed":
            ep.failure = _Failure(kind, detail)

    def _state(self) -> dict[str, Any]:
        ep = self._require()
        return BimEditState(calls_used=len(ep.calls), failure=ep.failure.kind).to_dict()

    def _require(self) -> _Episode:
        if self._ep is None:
            raise RuntimeError("BimEditEnv: call reset(task) before step()")
        return self._ep

    # -- result -------------------------------------------------------------------------------
    def outcome(self) -> BimEditOutcome:
        """The last committed model and how the run went (computed once per episode)."""
        if self._outcome is not None:
            return self._outcome
        ep = self._require()
        changed = ep.committed_hash != _initial_hash(self.task)
        out = BimEditOutcome(
            committed=changed, failure=ep.failure.kind, failure_detail=ep.failure.detail,
            tool_calls=len(ep.calls), call_status=[c.status for c in ep.calls],
            commits=sum(c.committed for c in ep.calls), final_text=ep.final_text, strict=self.options.strict,
            action_format=self.options.action_format, reload_per_call=self.options.reload_per_call,
        )
        data = ep.committed_bytes if changed else None
        if data is not None:
            if self.output_dir is not None:
                self.output_dir.mkdir(parents=True, exist_ok=True)
                kept = self.output_dir / "committed.ifc"
                kept.write_bytes(data)
                out.model_path = str(kept.resolve())
            else:
                out.model_zb64 = base64.b64encode(zlib.compress(data, 6)).decode("ascii")
        self._outcome = out
        return out

    def close(self) -> None:
        if self._ep is not None:
            self._ep.worker.close()
            remove_tree(self._ep.workdir)
            self._ep = None


def _initial_hash(task: Task | None) -> str:
    assert task is not None
    return _digest(Path(from_harness(task).input_ifc).read_bytes())


def make_env(task: Task, options: BimEditOptions) -> BimEditEnv:
    """The suite's env factory."""
    return BimEditEnv(options)
