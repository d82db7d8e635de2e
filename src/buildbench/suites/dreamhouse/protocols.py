"""DreamHouse protocols (paper §5.4, Table 6): Planner-Atomic, Planner-Reactive,
Planner-Managed and Iterative Refinement with visual feedback.

Every protocol starts with Phase 0: the agent's JSON plan, checked by :mod:`.plan` (lot
size to 2 decimals, taxonomy, dependency DAG, bounds); a rejected plan is retried within
the protocol's budget. Then:

- **Atomic**: one complete submission per attempt; the scene persists across attempts
  (paper §5.1); accept when every test passes.
- **Reactive**: one complete submission per attempt, checked phase by phase in the order
  it built (load path + stability on each prefix), then with every test; a failure
  regenerates the whole submission from an empty scene.
- **Managed**: the plan's steps are unlocked one at a time; each must pass load path +
  stability on the whole scene; a failed attempt is rolled back (earlier steps are never
  invalidated); per-step and global retry budgets.
- **Managed + visual feedback** (paper Table 5): Managed, and after every passed step the
  agent sees its frame beside the target view by view, with S per view, in the next request.
- **Refinement**: Atomic, then up to 10 full revisions scored by visual fidelity with
  side-by-side images; a revision that fails any structural test is rejected even if it
  looks better.

The visual-retry gate (Table 6's τ_retry) is on by default, as in the paper's runs: a
structurally passing whole frame (Atomic, Reactive, the last Managed step) whose visual
fidelity S is below τ_retry is retried with that said; ``-o require_visual=false`` turns it
off (the paper's Qwen3.5 run). Refinement's Atomic stage runs without it: refinement itself
is the visual loop.

Tool-calling agents build over several calls; a tool step counts as an attempt only when
it runs ``validate``, and ``max_actions`` bounds the turns of any episode.

Protocols drive the env through ``ctx.step`` and its controls, called as typed methods
(``ctx.control(env.set_scope, ...)``: scope, checkpoints, evaluation, visual scoring on the GL
thread, notes), so every operation is in the trajectory and nothing slow runs on the event loop.
"""

from __future__ import annotations

import copy
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ParamSpec

from buildbench.harness import Action, Agent, EpisodeContext, Observation, Protocol, StepResult
from buildbench.harness.errors import ConfigError

from .env import CheckScope, DreamHouseEnv
from .options import DreamHouseOptions
from .plan import PlanCheck, PlanStep, check_plan
from .prompts import plan_retry_text, render, retry_text
from .tasks import has_ground_truth
from .views import VisualScore, VisualScorer, visual_scorer


@dataclass(frozen=True)
class Budget:
    """One protocol's hyperparameters (paper Table 6).

    Attributes:
        step_retries: Retries after a failed attempt: of the plan, of a whole frame, of a step
            under Managed (``-o step_retries``; ``-o max_retries`` is the model client's own).
        max_tokens: Completion tokens per model call.
        tau_retry: Visual similarity below which a passing attempt is retried (when the
            visual gate is on) or refinement continues.
        history: Exchanges kept besides the task turn (None: the full conversation).
        global_retries: Managed only: retries across all steps.
        max_actions: Agent turns per episode, a guard for tool-calling agents ([S]; the
            paper speaks of "up to ~50 API calls").
        revisions: Refinement only: revisions after the Atomic pass.
    """

    step_retries: int
    max_tokens: int
    tau_retry: float
    history: int | None = None
    global_retries: int | None = None
    max_actions: int = 60
    revisions: int = 0


#: Table 6 (all models share these values except the Managed history: full for GPT-5 and
#: Gemini, last 5 for Claude; choose with ``-o history=5``). Refinement's "10 retries" are
#: its revisions; the Atomic run it starts from keeps Atomic's 5 retries.
TABLE6: dict[str, Budget] = {
    "planner-atomic": Budget(step_retries=5, max_tokens=16_384, tau_retry=0.8),
    "planner-reactive": Budget(step_retries=10, max_tokens=64_000, tau_retry=0.6),
    "planner-managed": Budget(step_retries=5, max_tokens=16_384, tau_retry=0.4, global_retries=30),
    "planner-managed-visual": Budget(step_retries=5, max_tokens=16_384, tau_retry=0.4, global_retries=30),
    "iterative-refinement": Budget(step_retries=5, max_tokens=65_536, tau_retry=0.6, revisions=10),
}


#: The options that override a Table 6 value; unset (None) keeps the protocol's own.
BUDGET_OPTIONS = ("step_retries", "global_retries", "max_actions", "revisions", "tau_retry", "max_tokens", "history")


def budget_from_options(name: str, options: DreamHouseOptions) -> Budget:
    """Table 6's budget for protocol ``name`` with the run's overrides applied (``history`` None,
    ``full`` or unset, is Table 6's own: the whole conversation for every protocol)."""
    overrides = {key: value for key in BUDGET_OPTIONS if (value := getattr(options, key)) is not None}
    return replace(TABLE6[name], **overrides)


class _Stop(Exception):
    """The episode ends (agent error or action cap); the reason is already logged."""


_UNSENT = object()
P = ParamSpec("P")


class DreamHouseProtocol(Protocol[DreamHouseEnv]):
    """Shared machinery: agent set-up, Phase 0, acting with caps, feedback turns.

    Args:
        budget: Table 6 budget (with overrides).
        name: Label recorded with episodes.
        require_visual: Retry structurally passing attempts whose visual fidelity is below
            τ_retry (on by default, as in the paper; needs a visual scorer; the Qwen3.5 run
            turned it off).
        visual: Visual scorer; default the one installed in :mod:`.views`.
    """

    def __init__(self, budget: Budget, *, name: str, require_visual: bool = True,
                 visual: VisualScorer | None = None) -> None:
        self.budget = budget
        self.name = name
        self.require_visual = require_visual
        self._visual = visual
        self.actions = 0
        self.retries = 0
        self.scope: CheckScope = "all"
        self.n_members = 0
        #: Bookkeeping kept in the outcome under ``protocol`` (sent to the env with ``note``).
        self.notes: dict[str, Any] = {}
        self._sent: dict[str, Any] = {}

    @property
    def visual(self) -> VisualScorer | None:
        """The visual scorer in use, if any."""
        return self._visual or visual_scorer()

    async def run(self, env: DreamHouseEnv, agent: Agent, ctx: EpisodeContext) -> None:
        self._configure(agent)
        obs, _ = await ctx.reset(env)
        self.scope, self.n_members, self.notes, self._sent = "all", 0, {}, {}
        try:
            plan = await self._plan(env, agent, ctx, obs)
            if plan is not None:
                await self.build(env, agent, ctx, plan)
        except _Stop:
            pass
        await self.flush_notes(env, ctx)

    async def flush_notes(self, env: DreamHouseEnv, ctx: EpisodeContext) -> None:
        """Send the notes that changed since the last flush to the env (one logged control)."""
        self.notes.update(retries=self.retries, actions=self.actions)
        changed = {k: copy.deepcopy(v) for k, v in self.notes.items() if self._sent.get(k, _UNSENT) != v}
        if changed:
            await ctx.control(env.note, changed)
            self._sent.update(copy.deepcopy(changed))

    async def set_scope(self, env: DreamHouseEnv, ctx: EpisodeContext, scope: CheckScope) -> None:
        """Choose which tests decide the next steps' verdicts."""
        await ctx.control(env.set_scope, scope)
        self.scope = scope

    async def scene_control(self, ctx: EpisodeContext, control: Callable[P, Observation],
                            *args: P.args, **kwargs: P.kwargs) -> None:
        """A scene control (``env.reset_scene_control``, ``env.save_checkpoint``,
        ``env.restore_checkpoint``); the member count follows the scene."""
        obs = await ctx.control(control, *args, **kwargs)
        self.n_members = int(obs.state.get("n_members", self.n_members))

    def _configure(self, agent: Agent) -> None:
        """A model agent gets the budget's tokens per call and history: Table 6's, or the run's
        ``max_tokens``/``history`` where given (the budget already holds them)."""
        from buildbench.harness.llm_agent import LLMAgent

        if isinstance(agent, LLMAgent):
            agent.max_tokens = self.budget.max_tokens
            agent.history = self.budget.history

    async def act(self, agent: Agent, obs: Observation, ctx: EpisodeContext, *, role: str) -> Action:
        """One agent turn; an agent error or the action cap ends the episode."""
        if self.actions >= self.budget.max_actions:
            ctx.notes["stopped"] = f"action cap {self.budget.max_actions} reached"
            raise _Stop
        self.actions += 1
        action = await agent.act(obs, ctx)
        if action.error is not None:
            ctx.fail(action.error, action, obs, role=role)
            raise _Stop
        return action

    async def _plan(self, env: DreamHouseEnv, agent: Agent, ctx: EpisodeContext,
                    obs: Observation) -> PlanCheck | None:
        lot = dict(ctx.task.inputs["lot_size"])
        obs = Observation(text=obs.text, images=obs.images, state={**obs.state, "request": "plan"})
        for attempt in range(self.budget.step_retries + 1):
            action = await self.act(agent, obs, ctx, role="planner")
            check = check_plan(action.data if action.data is not None else (action.text or ""), lot)
            left = self.budget.step_retries - attempt
            text = "Plan accepted." if check.ok else plan_retry_text(list(check.problems), left=left)
            info = {"plan_ok": check.ok, "problems": list(check.problems), "steps": len(check.steps)}
            ctx.log(action, Observation(text=text), role="planner", info=info)
            if check.ok:
                self.notes["plan"] = {"ok": True, "attempts": attempt + 1, "steps": len(check.steps)}
                return check
            if left == 0 or not self._spend_retry():
                break
            obs = Observation(text=text, state={"request": "plan", "problems": list(check.problems)})
        self.notes["plan"] = {"ok": False, "attempts": attempt + 1}
        return None

    def _spend_retry(self) -> bool:
        """Count one retry against the global budget; False when it is spent."""
        cap = self.budget.global_retries
        if cap is not None and self.retries >= cap:
            return False
        self.retries += 1
        return True

    async def attempt(self, env: DreamHouseEnv, agent: Agent, ctx: EpisodeContext, obs: Observation,
                      *, role: str) -> StepResult:
        """Act and step until the agent submits something that is checked.

        Tool steps that do not validate keep building (within ``max_actions``); their
        tool results go back to the agent as they are.
        """
        while True:
            action = await self.act(agent, obs, ctx, role=role)
            result = await ctx.step(env, action, role=role)
            self.n_members = int(result.observation.state.get("n_members", self.n_members))
            if not action.tool_calls or any(c.name == "validate" for c in action.tool_calls):
                return result
            obs = Observation(text=result.observation.text, tool_results=result.observation.tool_results,
                              state={**obs.state, "feedback": True})

    async def visual_check(self, env: DreamHouseEnv, ctx: EpisodeContext) -> VisualScore | None:
        """Visual fidelity of the current scene, when a scorer is available."""
        scorer = self.visual
        if scorer is None or not has_ground_truth(ctx.task):
            return None
        return await ctx.control(env.visual_score, scorer)

    async def accepts(self, env: DreamHouseEnv, ctx: EpisodeContext, result: StepResult) -> tuple[bool, str]:
        """Whether a checked attempt ends the protocol, and extra feedback when only visuals fail."""
        if not result.info.get("all_passed"):
            return False, ""
        return await self.visual_gate(env, ctx)

    async def visual_gate(self, env: DreamHouseEnv, ctx: EpisodeContext) -> tuple[bool, str]:
        """Whether the current (structurally passing) frame clears τ_retry, and feedback if not."""
        if not self.require_visual:
            return True, ""
        score = await self.visual_check(env, ctx)
        if score is None or score.score >= self.budget.tau_retry:
            return True, ""
        return False, (f"\nEvery structural test passes, but visual fidelity S = {score.score:.3f} is below "
                       f"{self.budget.tau_retry:.2f}; make the frame match the target views.")

    async def full_build(self, env: DreamHouseEnv, agent: Agent, ctx: EpisodeContext, request: str,
                         *, fresh_scene: bool, visual_gate: bool = True) -> bool:
        """Whole-frame attempts until one is accepted or the retries run out."""
        obs = Observation(text=render(request), state={"request": "build", "scope": self.scope})
        for attempt in range(self.budget.step_retries + 1):
            if fresh_scene:
                await self.scene_control(ctx, env.reset_scene_control)
            result = await self.attempt(env, agent, ctx, obs, role="builder")
            if visual_gate:
                ok, extra = await self.accepts(env, ctx, result)
            else:
                ok, extra = bool(result.info.get("all_passed")), ""
            if ok:
                self.notes["attempts_to_pass"] = attempt + 1
                return True
            left = self.budget.step_retries - attempt
            if left == 0 or not self._spend_retry():
                return False
            text = retry_text(result.observation.text + extra, attempt=attempt + 1, left=left)
            obs = Observation(text=text, tool_results=result.observation.tool_results,
                              state={"request": "build", "scope": self.scope, "feedback": True})
        return False

    @abstractmethod
    async def build(self, env: DreamHouseEnv, agent: Agent, ctx: EpisodeContext, plan: PlanCheck) -> None:
        """Everything after Phase 0."""


class PlannerAtomic(DreamHouseProtocol):
    """One complete submission per attempt; the scene persists across attempts."""

    async def build(self, env: DreamHouseEnv, agent: Agent, ctx: EpisodeContext, plan: PlanCheck) -> None:
        await self.set_scope(env, ctx, "all")
        await self.full_build(env, agent, ctx, "request_atomic", fresh_scene=False)


class PlannerReactive(DreamHouseProtocol):
    """One complete submission per attempt, gated phase by phase; failures regenerate it all."""

    async def build(self, env: DreamHouseEnv, agent: Agent, ctx: EpisodeContext, plan: PlanCheck) -> None:
        await self.set_scope(env, ctx, "phased")
        await self.full_build(env, agent, ctx, "request_reactive", fresh_scene=True)


def _members_text(step: PlanStep) -> str:
    return ", ".join(f"{t} x{n}" for t, n in step.members) or "as you planned"


class PlannerManaged(DreamHouseProtocol):
    """The plan's steps one at a time, each gated by load path + stability, with rollback."""

    #: Show the frame beside the target after every passed step (the Table 5 variant).
    step_feedback = False

    async def build(self, env: DreamHouseEnv, agent: Agent, ctx: EpisodeContext, plan: PlanCheck) -> None:
        total = len(plan.steps)
        done = 0
        self._shown: VisualScore | None = None
        for k, step in enumerate(plan.steps, start=1):
            if not await self._one_step(env, agent, ctx, step, k, total):
                break
            done = k
            if self.step_feedback and k < total:
                self._shown = await self.visual_check(env, ctx)
        self.notes["steps_passed"] = done
        self.notes["steps_total"] = total
        await self.set_scope(env, ctx, "all")
        await self.flush_notes(env, ctx)
        await ctx.control_as("validator", env.evaluate, scope="all")

    async def _one_step(self, env: DreamHouseEnv, agent: Agent, ctx: EpisodeContext, step: PlanStep,
                        k: int, total: int) -> bool:
        await self.set_scope(env, ctx, "early")
        story = f", story {step.story}" if step.story else ""
        text = render("request_step", step=k, total=total, phase=step.phase, section=step.section,
                      story_text=story, members=_members_text(step), n_members=self.n_members)
        state = {"request": "step", "step": step.to_dict(), "index": k, "total": total}
        shown = self._shown
        images: list[Any] = list(shown.images) if shown is not None else []
        if shown is not None:
            text += _step_visual_text(shown)
        obs = Observation(text=text, images=images, state=state)
        checkpoint = f"step{k}"
        await self.scene_control(ctx, env.save_checkpoint, label=checkpoint)
        for attempt in range(self.budget.step_retries + 1):
            result = await self.attempt(env, agent, ctx, obs, role="builder")
            extra = ""
            left = self.budget.step_retries - attempt
            if result.info.get("passed"):
                if k < total:
                    return True
                # The last step completes the frame: the visual-retry gate applies to it, and
                # when the retries are spent the frame stands as built (as Atomic's does).
                ok, extra = await self.visual_gate(env, ctx)
                if ok or left == 0 or not self._spend_retry():
                    return True
                await self.scene_control(ctx, env.restore_checkpoint, label=checkpoint)
            else:
                await self.scene_control(ctx, env.restore_checkpoint, label=checkpoint)
                if left == 0 or not self._spend_retry():
                    self.notes["failed_step"] = k
                    return False
            obs = Observation(text=retry_text(result.observation.text + extra, attempt=attempt + 1, left=left),
                              images=images, tool_results=result.observation.tool_results,
                              state={**state, "feedback": True})
        return False


class PlannerManagedVisual(PlannerManaged):
    """Managed with per-step visual feedback (paper Table 5)."""

    step_feedback = True


def _step_visual_text(score: VisualScore) -> str:
    per_view = ", ".join(f"{v:.3f}" for v in score.per_view)
    return (f"\nSo far your frame scores visual fidelity S = {score.score:.3f} against the complete target "
            f"(per view: {per_view}); the images show your frame beside the target, view by view.")


class IterativeRefinement(DreamHouseProtocol):
    """Atomic first; then visual revisions that must keep every structural test passing."""

    async def build(self, env: DreamHouseEnv, agent: Agent, ctx: EpisodeContext, plan: PlanCheck) -> None:
        await self.set_scope(env, ctx, "all")
        if not await self.full_build(env, agent, ctx, "request_atomic", fresh_scene=False, visual_gate=False):
            self.notes["refinement"] = {"status": "no_structural_pass"}
            return
        score = await self.visual_check(env, ctx)
        if score is None:
            self.notes["refinement"] = {"status": "no_visual_scorer"}
            return
        # Table 2 covers the tasks that enter refinement: passed, but S below τ.
        notes: dict[str, Any] = {"status": "done", "baseline": score.score, "best": score.score,
                                 "accepted": 0, "rejected": 0, "revisions": 0,
                                 "eligible": score.score < self.budget.tau_retry}
        self.notes["refinement"] = notes
        for _ in range(self.budget.revisions):
            if score.score >= self.budget.tau_retry:
                break
            notes["revisions"] += 1
            per_view = ", ".join(f"{v:.3f}" for v in score.per_view)
            images_text = "The images show your frame beside the target, view by view. " if score.images else ""
            obs = Observation(text=render("request_refine", score=score.score, per_view=per_view,
                                          threshold=self.budget.tau_retry, images_text=images_text),
                              images=list(score.images), state={"request": "refine", "score": score.score})
            kept = f"revision{notes['revisions']}"
            await self.scene_control(ctx, env.save_checkpoint, label=kept)
            await self.scene_control(ctx, env.reset_scene_control)
            result = await self.attempt(env, agent, ctx, obs, role="refiner")
            if not result.info.get("all_passed"):
                await self.scene_control(ctx, env.restore_checkpoint, label=kept)
                notes["rejected"] += 1
                ctx.log(Action(), Observation(text="Revision rejected: it breaks structural tests; "
                                              "the previous frame is kept."),
                        role="protocol", info={"rejected": True})
                continue
            notes["accepted"] += 1
            new = await self.visual_check(env, ctx)
            score = new if new is not None else score
            notes["best"] = max(notes["best"], score.score)
        notes["final"] = score.score


_CLASSES: dict[str, type[DreamHouseProtocol]] = {
    "planner-atomic": PlannerAtomic,
    "planner-reactive": PlannerReactive,
    "planner-managed": PlannerManaged,
    "planner-managed-visual": PlannerManagedVisual,
    "iterative-refinement": IterativeRefinement,
}

DESCRIPTIONS: dict[str, str] = {
    "planner-atomic": "Phase-0 plan, then one complete script per attempt (Table 6: 5 retries, 16,384 tokens)",
    "planner-reactive": "one script checked phase by phase (load path + stability), regenerated on failure "
                        "(10 retries, 64,000 tokens)",
    "planner-managed": "plan steps unlocked one at a time, gated by load path + stability (5 per step / 30 "
                       "global retries, 16,384 tokens)",
    "planner-managed-visual": "Planner-Managed with the frame shown beside the target after every step "
                              "(Table 5)",
    "iterative-refinement": "Atomic, then up to 10 visual revisions; structural regressions rejected "
                            "(65,536 tokens)",
}


def make_protocol(name: str, options: DreamHouseOptions) -> DreamHouseProtocol:
    """Protocol ``name`` with Table 6's budget and the run's overrides.

    Raises:
        ConfigError: For an unknown name.
    """
    if name not in _CLASSES:
        raise ConfigError(f"unknown DreamHouse protocol {name!r}; known: {', '.join(_CLASSES)}")
    return _CLASSES[name](budget_from_options(name, options), name=name, require_visual=options.require_visual)
