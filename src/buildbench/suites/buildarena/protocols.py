"""The BuildArena workflow on function calling (spec 4.1; paper §2.3, App. H, I).

Stages of the five-role workflow (``roles="five"``):

1. **Plan** — the Planner answers with a ``<building_plan>``; one retry on a
   parse error.
2. **Draft–Review** per sub-structure — Drafter ↔ Reviewer, at most
   ``draft_turns`` (50) messages; the Reviewer approves with TERMINATE or
   ends the branch with ``raise_objection_draft``; the Drafter then writes
   the final blueprint.
3. **Build–Guidance** — Builder ↔ Guidance, Builder first, at most
   ``build_turns`` (300) messages; one library call per Builder reply;
   Guidance approves with TERMINATE or objects with ``raise_objection_build``.
4. **Refine** — only for machines with a spinning block: Guidance first, on
   a copy, with the refine and query tools (``raise_objection_refine``).
5. **Assemble** — only for plans with several sub-structures: an assembly of
   the approved machines with the assembly tools.
6. **Control** — Transport only: the Controller's JSON design, up to three
   trials with trajectory feedback; the best counts.

Only a TERMINATE approves a machine: an objection or a turn limit leaves the
episode without an approved machine (a failed sample). Ablations:
``guidance-builder`` (no plan, draft or review) and ``builder`` (the Builder
alone). ``rounds > 1`` adds the closed loop of the paper's Table 6:
simulate, and on failure revise a copy with the simulator's feedback.
The limits are the run's options (``draft_turns``, ``build_turns``,
``max_substructures``, ``rounds``; :class:`~.options.BuildArenaOptions`).
Scripted design agents (``plays_script``) are played step by step instead.

The workflow drives the env only through ``ctx.step`` and the env's controls
(``ctx.control(env.begin, ...)``: ``begin``, ``approve``, ``set_final``, ``evaluate_round``,
``query``…), so every stage switch, approval and simulation is in the trajectory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from buildbench.harness import Action, Agent, EpisodeContext, Observation, Protocol, Task

from .agents import OBJECTION_TOOLS
from .env import STAGE_GROUPS, BuildArenaEnv
from .library import COMMANDS
from .options import BuildArenaOptions
from .plan import Plan, PlanError, describe, parse_plan

Roles = Literal["five", "guidance-builder", "builder"]
TERMINATE = "TERMINATE"
MAX_SCRIPT_STEPS = 50_000
"""Safety stop for scripted agents (designs are a few hundred calls)."""
CLOSED_LOOP_ROUNDS = 5
"""Rounds of the closed-loop protocol when the run does not give ``-o rounds`` (paper Table 6)."""


@dataclass(frozen=True)
class LoopResult:
    """How a two-role loop ended: approved (TERMINATE), an objection, or the turn limit."""

    approved: bool
    objection: str | None
    turns: int


class _Stop(Exception):
    """The agent could not answer (API error, budget): the episode ends."""


def _terminates(text: str | None) -> bool:
    return TERMINATE in (text or "")


def _objection(action: Action) -> str | None:
    for call in action.tool_calls:
        if call.name in OBJECTION_TOOLS:
            args = call.arguments
            return f"{call.name}: {args.get('key_failure', '')} — {args.get('objection', '')}".strip()
    return None


def _call_report(action: Action, result_text: str) -> str:
    call = action.tool_calls[0]
    lines = [action.text] if action.text else []
    lines += [f"Called {call.name}({call.raw_arguments})", f"Result:\n{result_text}"]
    return "\n".join(lines)


async def _library_text(env: BuildArenaEnv, ctx: EpisodeContext, machine_id: str, op: str) -> str:
    return await ctx.control(env.query, machine_id, op)


def _builder_tools(kind: str) -> list[str]:
    return [c.name for c in COMMANDS.values() if c.group in STAGE_GROUPS[kind]]


async def _approve(env: BuildArenaEnv, ctx: EpisodeContext, machine_id: str, approved: bool = True, *,
                   final: bool = True) -> None:
    """Record the workflow's verdict on a machine and, by default, make it the product."""
    await ctx.control(env.approve, machine_id, approved)
    if final:
        await ctx.control(env.set_final, machine_id)


class Workflow(Protocol[BuildArenaEnv]):
    """The multi-role construction workflow (see the module docstring).

    Args:
        options: The run's options: ``draft_turns`` (messages in a Drafter ↔ Reviewer loop; released
            code: 50), ``build_turns`` (messages in a Builder ↔ Guidance loop; released code: 300)
            and ``max_substructures`` (sub-structures of a plan that are built; the tasks allow 1–3).
        roles: ``five`` (P, D, R, G, B), ``guidance-builder`` or ``builder`` (Table 4 ablations).
        rounds: Closed-loop rounds; 1 is the benchmark's single pass (Table 6 uses 5). Default: the
            ``rounds`` option.
        name: Label recorded with episodes.
    """

    def __init__(self, options: BuildArenaOptions, *, roles: Roles = "five", rounds: int | None = None,
                 name: str = "workflow") -> None:
        self.options = options
        self.roles = roles
        self.rounds = options.rounds if rounds is None else rounds
        self.name = name
        self.category = ""
        self.control_trials = 0

    async def _say(self, agent: Agent, ctx: EpisodeContext, role: str, thread: str, text: str,
                   tools: list[str] | tuple[str, ...] = (), tool_results: Any = ()) -> Action:
        state = {"role": role, "thread": thread, "tools": list(tools)}
        action = await agent.act(Observation(text=text, tool_results=list(tool_results), state=state), ctx)
        if action.error is not None:
            ctx.fail(action.error, action, role=role, info={"thread": thread})
            raise _Stop(str(action.error))
        return action

    async def run(self, env: BuildArenaEnv, agent: Agent, ctx: EpisodeContext) -> None:
        observation, info = await ctx.reset(env)
        self.category, self.control_trials = str(info["category"]), int(info["control_trials"])
        try:
            if getattr(agent, "plays_script", False):
                await play_script(env, agent, ctx, observation)
                return
            final = await self._construct(env, agent, ctx, observation.text)
            if final is None:
                return
            await self._control(env, agent, ctx, observation.text, final)
            if self.rounds > 1:
                await self._closed_loop(env, agent, ctx, observation.text)
        except _Stop:
            return

    # -- construction -------------------------------------------------------------------------

    async def _construct(self, env: BuildArenaEnv, agent: Agent, ctx: EpisodeContext, task_text: str) -> str | None:
        """Build the machine; returns the final machine's id when it was approved."""
        roles = self.roles
        if roles != "five":
            await ctx.control(env.begin, "build", "1")
            intro = f"{task_text}\n\nBuild the machine that solves this task."
            if roles == "builder":
                result = await self._solo(env, agent, ctx, "build1", intro)
            else:
                result = await self._duo(env, agent, ctx, "build1", _builder_tools("build"),
                                         "raise_objection_build", intro, intro, guidance_first=False)
            return await self._finish_machine(env, agent, ctx, "1", result, intro, roles == "guidance-builder")
        plan = await self._plan(agent, ctx, task_text)
        if plan is None:
            return None
        subs = plan.sub_structures[: self.options.max_substructures]
        built: list[tuple[str, dict[str, str]]] = []
        for i, sub in enumerate(subs, start=1):
            blueprint = await self._draft(agent, ctx, task_text, plan, i, len(subs))
            if blueprint is None:
                return None
            mid = str(i)
            await ctx.control(env.begin, "build", mid)
            context = f"{task_text}\n\nBlueprint of sub-structure {i} ({sub.get('name', '')}):\n{blueprint}"
            result = await self._duo(env, agent, ctx, f"build{i}", _builder_tools("build"), "raise_objection_build",
                                     context + "\n\nBuild it: first list your tools, then call start.",
                                     context + "\n\nGuide the builder one step at a time.", guidance_first=False)
            finished = await self._finish_machine(env, agent, ctx, mid, result, context, True)
            if finished is None:
                return None
            built.append((finished, sub))
        if len(built) == 1:
            return built[0][0]
        return await self._assemble(env, agent, ctx, task_text, plan, built)

    async def _finish_machine(self, env: BuildArenaEnv, agent: Agent, ctx: EpisodeContext, mid: str,
                              result: LoopResult, context: str, refine: bool) -> str | None:
        """Approve a built machine and refine it when it has wheels; returns the id to use, or None."""
        await _approve(env, ctx, mid, result.approved)
        if not result.approved or not (refine and await ctx.control(env.has_powered_wheel, mid)):
            return mid if result.approved else None
        rid = f"{mid}_rfd"
        await ctx.control(env.begin, "refine", rid, source=mid)
        text = ("The machine has been built; now carefully review the rotation of the rotatable blocks and "
                "refine the machine to meet the design requirements.\n\n" + context +
                "\n\nBuild result:\n" + await _library_text(env, ctx, rid, "get_machine_summary"))
        refined = await self._duo(env, agent, ctx, f"refine{mid}", _builder_tools("refine"),
                                  "raise_objection_refine", text, text, guidance_first=True)
        await _approve(env, ctx, rid, refined.approved)
        return rid if refined.approved else None

    async def _plan(self, agent: Agent, ctx: EpisodeContext, task_text: str) -> Plan | None:
        text = task_text
        for attempt in range(2):
            action = await self._say(agent, ctx, "planner", "plan", text)
            try:
                plan = parse_plan(action.text or "")
            except PlanError as exc:
                ctx.log(action, Observation(), role="planner", info={"thread": "plan", "plan_error": str(exc)})
                text = f"The output is not well-formatted, please try again. Error parsing the content: {exc}"
                continue
            ctx.log(action, Observation(), role="planner",
                    info={"thread": "plan", "sub_structures": len(plan.sub_structures), "attempt": attempt + 1})
            return plan
        return None

    async def _draft(self, agent: Agent, ctx: EpisodeContext, task_text: str, plan: Plan, i: int,
                     n: int) -> str | None:
        """Drafter ↔ Reviewer; the final blueprint, or None when objected or never approved."""
        sub = describe(plan.sub_structures[i - 1])
        context = (f"{task_text}\n\nOverall structure:\n{describe(plan.overall)}\n\n"
                   f"Sub-structure {i} of {n}:\n{sub}")
        to_drafter = context + "\n\nWrite the blueprint of this sub-structure."
        review_intro = context + "\n\nReview the drafter's blueprint.\n\n"
        approved, turns = False, 0
        d_thread, r_thread = f"draft{i}:drafter", f"draft{i}:reviewer"
        while turns < self.options.draft_turns:
            draft = await self._say(agent, ctx, "drafter", d_thread, to_drafter)
            ctx.log(draft, Observation(), role="drafter", info={"thread": d_thread})
            turns += 1
            if _terminates(draft.text):
                approved = True
                break
            if turns >= self.options.draft_turns:
                break
            review = await self._say(agent, ctx, "reviewer", r_thread, review_intro + "Drafter:\n" + (draft.text or ""),
                                     ("raise_objection_draft",))
            objection = _objection(review)
            ctx.log(review, Observation(), role="reviewer", info={"thread": r_thread, "objection": objection})
            turns += 1
            review_intro = ""
            if objection:
                return None
            if _terminates(review.text):
                approved = True
                break
            to_drafter = "Reviewer:\n" + (review.text or "")
        if not approved:
            return None
        final = await self._say(agent, ctx, "drafter", d_thread,
                                "Please write out the final version of the blueprint according to the "
                                "final decision of the reviewer.")
        ctx.log(final, Observation(), role="drafter", info={"thread": d_thread, "final_blueprint": True})
        return final.text or ""

    async def _duo(self, env: BuildArenaEnv, agent: Agent, ctx: EpisodeContext, label: str, builder_tools: list[str],
                   objection: str, builder_intro: str, guidance_intro: str, *, guidance_first: bool) -> LoopResult:
        """Builder ↔ Guidance, one library call per Builder reply."""
        b_thread, g_thread = f"{label}:builder", f"{label}:guidance"
        to_builder, to_guidance = builder_intro, guidance_intro + "\n\n"
        results: Any = ()
        speaker = "guidance" if guidance_first else "builder"
        turns = 0
        while turns < self.options.build_turns:
            turns += 1
            if speaker == "builder":
                action = await self._say(agent, ctx, "builder", b_thread, to_builder, builder_tools, results)
                if action.tool_calls:
                    step = await ctx.step(env, action, role="builder")
                    results = step.observation.tool_results
                    report = _call_report(action, step.observation.text)
                    if step.truncated:
                        return LoopResult(False, "library call budget spent", turns)
                else:
                    ctx.log(action, Observation(), role="builder", info={"thread": b_thread})
                    results, report = (), action.text or "(no reply)"
                if _terminates(action.text):
                    return LoopResult(True, None, turns)
                to_guidance += "Builder:\n" + report
                speaker = "guidance"
            else:
                action = await self._say(agent, ctx, "guidance", g_thread, to_guidance, (objection,))
                found = _objection(action)
                ctx.log(action, Observation(), role="guidance", info={"thread": g_thread, "objection": found})
                if found:
                    return LoopResult(False, found, turns)
                if _terminates(action.text):
                    return LoopResult(True, None, turns)
                prefix = to_builder + "\n\n" if turns == 1 else ""
                to_builder = prefix + "Guidance:\n" + (action.text or "Continue.")
                to_guidance = ""
                speaker = "builder"
        return LoopResult(False, None, turns)

    async def _solo(self, env: BuildArenaEnv, agent: Agent, ctx: EpisodeContext, label: str, intro: str) -> LoopResult:
        """The Builder alone (ablation): it ends the build itself with TERMINATE."""
        thread = f"{label}:builder"
        text = intro + ("\n\nYou work alone: make one tool call per reply; when the machine is complete, check it "
                        "with get_machine_summary and then reply with TERMINATE.")
        results: Any = ()
        for turn in range(1, self.options.build_turns + 1):
            action = await self._say(agent, ctx, "builder", thread, text, _builder_tools("build"), results)
            text = ""
            if action.tool_calls:
                step = await ctx.step(env, action, role="builder")
                results = step.observation.tool_results
                if step.truncated:
                    return LoopResult(False, "library call budget spent", turn)
            else:
                ctx.log(action, Observation(), role="builder", info={"thread": thread})
                results = ()
                text = "Continue with one tool call, or reply with TERMINATE when the machine is complete."
            if _terminates(action.text):
                return LoopResult(True, None, turn)
        return LoopResult(False, None, self.options.build_turns)

    async def _assemble(self, env: BuildArenaEnv, agent: Agent, ctx: EpisodeContext, task_text: str, plan: Plan,
                        built: list[tuple[str, dict[str, str]]]) -> str | None:
        candidates = "\n".join(f"- machine {mid}: sub-structure '{sub.get('name', '')}': {sub.get('description', '')}"
                               for mid, sub in built)
        await ctx.control(env.begin, "assemble", "assembly", candidates=[mid for mid, _ in built])
        context = (f"{task_text}\n\nOverall structure:\n{describe(plan.overall)}\n\nBuilt machines:\n{candidates}\n\n"
                   "Assemble the final machine using at least one machine from each sub-structure: add_machine "
                   "places a built machine as sub-structure A, B, ... (shift and rotate them apart so they do not "
                   "overlap), then join them, for example with braces.")
        result = await self._duo(env, agent, ctx, "assemble", _builder_tools("assemble"), "raise_objection_build",
                                 context, context, guidance_first=False)
        await _approve(env, ctx, "assembly", result.approved)
        return "assembly" if result.approved else None

    # -- control and closed loop --------------------------------------------------------------

    async def _control(self, env: BuildArenaEnv, agent: Agent, ctx: EpisodeContext, task_text: str,
                       final: str) -> None:
        if self.category != "transport":
            return
        powered = await _library_text(env, ctx, final, "review_powered_blocks")
        await ctx.control(env.begin, "control", final)
        text = f"{task_text}\n\nThe finished machine's powered blocks:\n{powered}\n\nDesign its control."
        for _ in range(self.control_trials):
            action = await self._say(agent, ctx, "controller", f"control:{final}", text)
            step = await ctx.step(env, action, role="controller")
            if step.terminated:
                return
            text = (step.observation.text + "\n\nPlease analyse the motion trajectory of the previous control result "
                    "and design a new control configuration and sequence that does better on the task.")

    async def _closed_loop(self, env: BuildArenaEnv, agent: Agent, ctx: EpisodeContext, task_text: str) -> None:
        for round_no in range(1, self.rounds + 1):
            tested = await ctx.control_as("simulator", env.evaluate_round)
            source = tested.entry["machine"]
            if tested.evaluation.passed or round_no == self.rounds or source is None:
                return
            vid = f"{source.split('_v')[0]}_v{round_no + 1}"
            await ctx.control(env.begin, "revise", vid, source=source)
            summary = await _library_text(env, ctx, vid, "get_machine_summary")
            text = (f"{task_text}\n\nThe machine was tested in the simulator and did not pass:\n{tested.text}\n\n"
                    "Revise it so that it passes. Current machine:\n" + summary)
            result = await self._duo(env, agent, ctx, f"revise{round_no + 1}", _builder_tools("revise"),
                                     "raise_objection_build", text, text, guidance_first=True)
            if not result.approved:
                return
            await _approve(env, ctx, vid)
            await ctx.control(env.new_control_round)
            await self._control(env, agent, ctx, task_text, vid)


async def play_script(env: BuildArenaEnv, agent: Agent, ctx: EpisodeContext, observation: Observation) -> None:
    """Play a scripted agent's data actions: stage switches, approvals and library calls."""
    for _ in range(MAX_SCRIPT_STEPS):
        action = await agent.act(observation, ctx)
        if action.error is not None:
            ctx.fail(action.error, action, observation)
            return
        data = action.data if isinstance(action.data, dict) else {}
        if data.get("done"):
            return
        if "stage" in data:
            observation = await ctx.control(env.begin, **data["stage"])
        elif "approve" in data:
            await _approve(env, ctx, str(data["approve"]), final=bool(data.get("final")))
            observation = Observation(text=f"machine {data['approve']} approved")
        else:
            step = await ctx.step(env, action, role="builder")
            observation = step.observation
            if step.truncated:
                return


def workflow(task: Task, options: BuildArenaOptions) -> Workflow:
    """The five-role workflow (``-o draft_turns=… -o build_turns=… -o max_substructures=…``)."""
    return Workflow(options, name="workflow")


def closed_loop(task: Task, options: BuildArenaOptions) -> Workflow:
    """The workflow with simulator feedback, ``-o rounds=N`` rounds (default 5, paper Table 6)."""
    rounds = options.rounds if "rounds" in options.model_fields_set else CLOSED_LOOP_ROUNDS
    return Workflow(options, rounds=rounds, name="closed-loop")


def guidance_builder(task: Task, options: BuildArenaOptions) -> Workflow:
    """Ablation: Guidance and Builder only (paper Table 4)."""
    return Workflow(options, roles="guidance-builder", name="guidance-builder")


def builder_only(task: Task, options: BuildArenaOptions) -> Workflow:
    """Ablation: the Builder alone (paper Table 4)."""
    return Workflow(options, roles="builder", name="builder-only")
