"""The SceneReVis environment: the diagnose-and-act loop over one room (spec §2.1–§2.7).

Turn 0 expects ``<create_scene>`` with the empty room (no image is shown before it). Every
later turn expects ``<think>`` + ``<tool_calls>``; the env applies the calls atomically (see
:mod:`.actions`), retrieves assets for added or replaced objects (:mod:`.retrieval`), checks
the physics (the reward variant, any penetration) and answers with the merged top + diagonal
image, the scene JSON and, unless ``feedback`` is off, the physics hint. A malformed reply
gets one line per problem and leaves the scene as it was.

A task that carries ``inputs["initial_scene"]`` (goal-oriented refinement) starts at turn 1
with that scene; turn 0 is skipped.

The episode ends on ``terminate`` or when ``max_turns`` replies (counting turn 0) are spent.
Rewards come from :mod:`.reward`: r_init on turn 0, the intermediate reward on editing turns
and the final reward on the last turn (``terminate`` or the budget's last reply); the step's
``info["reward_terms"]`` holds the breakdown and ``outcome().trajectory_reward`` the
trajectory return. The judge is the rule-based one unless ``-o judge=<model spec>`` names a
chat model (a vision model sees the merged renders).

Once a protocol has called :meth:`SceneReVisEnv.finish`, the outcome also carries
``latency_s``, the time from reset to the episode's end without the reward's own work (what
the paper's latency per scene measures), and ``eval_judge``, the evaluation judge's record,
once one is stored (:meth:`SceneReVisEnv.record_evaluation`). Both stay out of the outcome of
an env driven directly, which is then the same for the same seed.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from buildbench.harness import Action, Env, Observation, ResetResult, StepResult, Task
from buildbench.harness.env import control
from buildbench.harness.errors import ConfigError
from buildbench.scenes.assets import AssetLibrary

from .actions import (
    NEED_RETRIEVAL,
    Addressing,
    ApplyResult,
    ReplyError,
    SceneState,
    apply_calls,
    parse_create_scene,
    parse_turn,
)
from .check.layout import parse_layout
from .check.optimize import optimize_scene
from .check.physics import REWARD, REWARD_RELEASED, PhysicsReport, PhysicsRules, check_physics, feedback_text
from .judge.semantic import Judge, RuleJudge, VisionJudge
from .options import RULE, SceneReVisOptions
from .outcome import SceneReVisOutcome
from .reward import HybridReward, TurnReward, trajectory_return
from .spaces import SceneReVisState


def check_geometry(geometry: str) -> None:
    """Refuse ``geometry=mesh`` on a machine without an asset folder (ConfigError, one line)."""
    if geometry == "mesh" and not AssetLibrary.from_env().configured:
        raise ConfigError("option geometry=mesh needs an asset folder (BUILDBENCH_3DFUTURE_DIR or "
                          "BUILDBENCH_OBJAVERSE_DIR); use geometry=procedural without one")


@dataclass
class _Episode:
    """Per-episode state."""

    task: Task
    seed: int
    instruction: str
    state: SceneState | None = None
    turn: int = 0
    done: bool = False
    termination: str = ""
    invalid_replies: int = 0
    applied_calls: int = 0
    categories: dict[str, str] = field(default_factory=dict)
    errors: list[list[str]] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    reward: HybridReward | None = None
    last_image: Any = None
    started_s: float = field(default_factory=time.perf_counter)
    ended_s: float | None = None
    reward_s: float = 0.0
    evaluation: dict[str, Any] | None = None
    # The last step's observation and its pieces (head, feedback lines, scene block), for a
    # layout critique to be folded in; None when the step built no edit observation.
    last_view: tuple[str, list[str], str, Observation] | None = None
    critiques: list[dict[str, Any]] = field(default_factory=list)



# JSON strings never hold a raw newline, so a bracket followed by one is structure.
_NUMBER_LIST = re.compile(r"\[\n\s*(-?[\d.eE+-]+(?:,\n\s*-?[\d.eE+-]+)*)\n\s*\]")


def scene_json(scene: dict[str, Any]) -> str:
    """Indented JSON with every list of numbers on one line (a vector per line)."""
    text = json.dumps(scene, indent=2, ensure_ascii=False)
    return _NUMBER_LIST.sub(lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]", text)


def scene_block(scene: dict[str, Any]) -> str:
    """The ``<current_scene>`` block of a user turn (spec §2.1)."""
    return f"<current_scene>\n```json\n{scene_json(scene)}\n```\n</current_scene>"


class SceneReVisEnv(Env):
    """One room-layout episode at a time, under the run's options (``address``, ``max_turns``,
    ``render``, ``feedback``, ``retrieve``, ``retrieved_size``, ``optimize``, ``judge``,
    ``geometry``: see :class:`~.options.SceneReVisOptions`)."""

    state_type = SceneReVisState

    def __init__(self, options: SceneReVisOptions | None = None) -> None:
        self.options = options or SceneReVisOptions()
        self._ep: _Episode | None = None
        self._judge: Judge | None = None

    @property
    def address(self) -> Addressing:
        """How calls and scene JSON name objects (``-o address``)."""
        return Addressing(self.options.address)

    @property
    def physics_rules(self) -> PhysicsRules:
        """The reward physics: the release's FCL contacts in the released mode, else exact boxes."""
        return REWARD_RELEASED if self.address is Addressing.JID else REWARD

    @property
    def judge(self) -> Judge:
        """The reward's judge: the rule judge (not comparable with the paper) or ``-o judge``'s model."""
        if self._judge is None:
            if self.options.judge == RULE:
                self._judge = RuleJudge()
            else:
                from buildbench.llm import make_model

                self._judge = VisionJudge(make_model(self.options.judge))
        return self._judge

    # --- harness interface ---------------------------------------------------------------
    def reset(self, task: Task, *, seed: int | None = None) -> ResetResult:
        instruction = str(task.inputs.get("instruction") or "").strip()
        if not instruction:
            raise ConfigError(f"task {task.id}: inputs.instruction is empty")
        ep = self._ep = _Episode(task, int(seed or 0), instruction)
        room_type = str(task.target.get("room_type") or task.metadata.get("room_type") or "")
        ep.reward = HybridReward(instruction, room_type, self.judge, physics_rules=self.physics_rules,
                                 released_support=self.address is Addressing.JID,
                                 geometry=self.options.geometry)
        initial = task.inputs.get("initial_scene")
        if initial is None:
            return ResetResult(Observation(text=instruction, state=self._state_dict()), {"turn": 0})
        try:
            ep.state = SceneState.from_flat(dict(initial), where=f"task {task.id} initial_scene")
        except ReplyError as exc:
            raise ConfigError(str(exc)) from None
        self._retrieve(ep.state, [o["id"] for o in ep.state.objects if not o.get("jid")])
        ep.turn = 1
        obs, info = self._edit_observation(first=True, problems=self._physics(ep.state))
        stand_ins = {"mesh_fallbacks": info["mesh_fallbacks"]} if "mesh_fallbacks" in info else {}
        return ResetResult(obs, {"turn": 1, **stand_ins})

    def step(self, action: Action) -> StepResult:
        ep = self._require()
        if ep.done:
            raise ConfigError("step() after the episode ended; call reset()")
        text = action.text or ""
        turn = ep.turn
        ep.turn += 1
        ep.last_view = None
        before = ep.state.to_flat(self.address) if ep.state is not None else None
        obs, info = self._create(text) if before is None else self._edit(text)
        final = ep.done or ep.turn >= self.options.max_turns
        t0 = time.perf_counter()
        reward = self._turn_reward(text, before, obs, final)
        ep.reward_s += time.perf_counter() - t0
        ep.rewards.append(reward.total)
        info.update(turn=turn, reward_terms=reward.to_dict())
        terminated = ep.done
        truncated = not terminated and final
        if truncated:
            ep.done, ep.termination = True, "budget"
        return StepResult(obs, reward.total, terminated, truncated, info)

    def _turn_reward(self, reply: str, before: dict[str, Any] | None, obs: Observation, final: bool) -> TurnReward:
        """The §4.3 reward of this turn (init, intermediate or final)."""
        ep = self._require()
        assert ep.reward is not None
        image = obs.images[0] if obs.images and isinstance(obs.images[0], np.ndarray) else None
        if before is None and ep.state is None and final:
            return TurnReward("final", -1.0, judge=self.judge.label, notes=["no room was ever created"])
        if before is None:
            ep.last_image = image
            return ep.reward.init_turn(reply)
        assert ep.state is not None
        after = ep.state.to_flat(self.address)
        if final:
            return ep.reward.final(reply, before, after, after_image=image)
        out = ep.reward.turn(reply, before, after, before_image=ep.last_image, after_image=image)
        ep.last_image = image
        return out

    def outcome(self) -> SceneReVisOutcome:
        ep = self._require()
        scene = ep.state.to_flat(self.address) if ep.state is not None else None
        latency = round(ep.ended_s - ep.started_s - ep.reward_s, 4) if ep.ended_s is not None else None
        return SceneReVisOutcome(
            instruction=ep.instruction, scene=scene, turns=ep.turn, termination=ep.termination or "incomplete",
            invalid_replies=ep.invalid_replies, applied_calls=ep.applied_calls, address=self.address.value,
            turn_rewards=list(ep.rewards), trajectory_reward=trajectory_return(ep.rewards), judge=self.judge.label,
            latency_s=latency, eval_judge=dict(ep.evaluation) if ep.evaluation is not None else None,
            geometry=self.options.geometry, vlm_feedback=list(ep.critiques) or None,
        )

    # --- evaluation (spec §5.2) -------------------------------------------------------------
    @control(doc="stop the latency clock; the latency per scene in seconds")
    def finish(self) -> float:
        """Stop the latency clock (the first call counts); the latency per scene in seconds:
        reset to now, the reward's own work left out."""
        ep = self._require()
        if ep.ended_s is None:
            ep.ended_s = time.perf_counter()
        return ep.ended_s - ep.started_s - ep.reward_s

    @control(cpu_bound=True, doc="the final scene and its merged render, for an evaluation judge")
    def final_view(self) -> tuple[dict[str, Any], np.ndarray] | None:
        """The final scene and its merged render for an evaluation judge (None before a room
        exists)."""
        ep = self._require()
        if ep.state is None:
            return None
        return ep.state.to_flat(self.address), self._render()

    @control(doc="keep the evaluation judge's record")
    def record_evaluation(self, record: dict[str, Any]) -> None:
        """Keep the evaluation judge's record (scores or failure) for :meth:`outcome`."""
        self._require().evaluation = dict(record)

    @control(doc="keep a layout critique's record; the last observation with it")
    def layout_feedback(self, record: dict[str, Any]) -> Observation | None:
        """Keep a layout critique's record (:mod:`.vlm_feedback`); when it holds a critique
        (``text``) and the last step showed the scene, that observation with the critique
        appended to its feedback, space-joined to the last line (the physics hint); else None."""
        ep = self._require()
        ep.critiques.append(dict(record))
        critique = str(record.get("text") or "").strip()
        if not critique or ep.last_view is None:
            return None
        head, lines, block, obs = ep.last_view
        lines = [*lines[:-1], f"{lines[-1]} {critique}"] if lines else [critique]
        ep.last_view = (head, lines, block, obs)
        return replace(obs, text=_observation_text(head, lines, block))

    # --- turns ----------------------------------------------------------------------------
    def _create(self, text: str) -> tuple[Observation, dict[str, Any]]:
        ep = self._require()
        try:
            record = parse_create_scene(text)
            state = SceneState.from_flat(record, where="<create_scene>")
        except ReplyError as exc:
            ep.invalid_replies += 1
            ep.errors.append([str(exc)])
            msg = (f"Your reply could not create the room: {exc}\nReply again with <create_scene> and a ```json "
                   "block holding room_type, room_id, bounds_top, bounds_bottom and \"objects\": [].")
            return Observation(text=f"{msg}\n\nThe request: {ep.instruction}", state=self._state_dict()), \
                {"valid": False, "errors": [str(exc)]}
        ep.state = state
        ep.errors.append([])
        self._retrieve(state, [o["id"] for o in state.objects])
        obs, info = self._edit_observation(first=True, problems=self._physics(state))
        info["valid"] = True
        return obs, info

    def _edit(self, text: str) -> tuple[Observation, dict[str, Any]]:
        ep = self._require()
        assert ep.state is not None
        try:
            parsed = parse_turn(text, self.address)
            result = apply_calls(ep.state, parsed.calls, self.address)
        except ReplyError as exc:
            result = ApplyResult(ep.state, errors=[str(exc)])
        ep.errors.append(list(result.errors))
        if result.errors:
            ep.invalid_replies += 1
            notes = ["Your reply was not applied; the scene is unchanged.", *result.errors]
            return self._edit_observation(notes=notes, problems=self._physics(ep.state))
        ep.state = result.state
        ep.applied_calls += len(result.applied)
        self._retrieve(ep.state, result.added)
        notes = []
        if self.options.optimize:
            # The released inference optimizer works on boxes; ours shapes objects at the level.
            level = "box" if self.address is Addressing.JID else self.options.geometry
            repaired = optimize_scene(ep.state.to_flat(), seed=ep.seed * 1000 + ep.turn, geometry=level)
            ep.state.objects = [dict(o) for o in repaired.scene["objects"]]
            if repaired.feedback():
                notes.append(repaired.feedback())
        if result.ignored:
            notes.append(f"{result.ignored} call(s) after terminate were ignored.")
        problems = self._physics(ep.state)
        if result.terminated:
            ep.done, ep.termination = True, "terminate"
        obs, info = self._edit_observation(notes=notes, problems=problems)
        info.update(applied=result.applied, added=result.added, edited=result.edited, removed=result.removed)
        return obs, info

    # --- observation pieces ----------------------------------------------------------------
    def _edit_observation(self, *, first: bool = False, notes: list[str] | None = None,
                          problems: PhysicsReport | None = None) -> tuple[Observation, dict[str, Any]]:
        ep = self._require()
        assert ep.state is not None
        flat = ep.state.to_flat(self.address)
        lines = list(notes or [])
        hint = ""
        if problems is not None and self.options.feedback:
            hint = feedback_text(problems, self._names(ep.state))
            if hint:
                lines.append(hint)
        head = ep.instruction if first else (
            f'Please continue to improve the scene based on the original request: "{ep.instruction}"')
        block = scene_block(flat)
        text = _observation_text(head, lines, block)
        images = [self._render()] if self.options.render else []
        info: dict[str, Any] = {"valid": not notes or not notes[0].startswith("Your reply was not applied")}
        if problems is not None:
            info["physics"] = {"collision_rate": problems.collision_rate_pct, "oob_rate": problems.oob_rate_pct,
                               "pairs": len(problems.contacts)}
            if problems.geometry == "mesh":  # objects checked on a procedural stand-in, never silently
                ids = [o["id"] for o in ep.state.objects]
                info["mesh_fallbacks"] = [{"object": ids[k], "source": source}
                                          for k, source in problems.mesh_fallbacks]
        obs = Observation(text=text, images=images, state=self._state_dict(problems))
        ep.last_view = (head, lines, block, obs)
        return obs, info

    def _state_dict(self, problems: PhysicsReport | None = None) -> dict[str, Any]:
        ep = self._require()
        collisions = out_of_bounds = None
        if problems is not None and ep.state is not None:
            ids = [o["id"] for o in ep.state.objects]
            collisions = [[ids[c.a], ids[c.b], round(c.depth_m, 4)] for c in problems.contacts]
            out_of_bounds = [[ids[i], round(float(problems.outside_fraction[i]), 4)] for i in problems.out_of_bounds]
        return SceneReVisState(
            turn=ep.turn, instruction=ep.instruction, phase="create" if ep.state is None else "edit",
            scene=ep.state.to_flat(self.address) if ep.state else None,
            errors=ep.errors[-1] if ep.errors else [], turns_left=self.options.max_turns - ep.turn,
            collisions=collisions, out_of_bounds=out_of_bounds,
            object_ids=[str(o["id"]) for o in ep.state.objects] if ep.state else None,
        ).to_dict()

    def _names(self, state: SceneState) -> list[str]:
        if self.address is Addressing.JID:
            return [str(o["desc"]) for o in state.objects]  # the released hint names descriptions
        return [f"{o['id']}: {o['desc'][:40]}" for o in state.objects]

    def _physics(self, state: SceneState) -> PhysicsReport:
        return check_physics(parse_layout(state.to_flat()), self.physics_rules, geometry=self.options.geometry)

    def _render(self) -> Any:
        from .render import render_merged

        ep = self._require()
        assert ep.state is not None
        flat = ep.state.to_flat()
        for obj in flat["objects"]:
            obj["category"] = ep.categories.get(obj["id"], "")
        return render_merged(flat, seed=ep.seed, turn=ep.turn, geometry=self.options.geometry)

    def _retrieve(self, state: SceneState, ids: list[str]) -> None:
        """Fill ``jid`` (and optionally ``size``) of the named objects by retrieval."""
        if not ids:
            return
        ep = self._require()
        if not self.options.retrieve:
            for oid in ids:
                state.find(oid).setdefault("jid", NEED_RETRIEVAL)
            return
        from .retrieval import default_index

        index = default_index()
        for oid in ids:
            obj = state.find(oid)
            hit = index.retrieve(obj["desc"], tuple(obj["size"]))
            if hit is None:
                obj["jid"] = NEED_RETRIEVAL
                continue
            obj["jid"] = hit.asset.asset_id
            ep.categories[oid] = hit.asset.category
            if self.options.retrieved_size and hit.size_m is not None:
                obj["size"] = [round(v, 4) for v in hit.size_m]
                obj["retrieved_size"] = list(obj["size"])

    def _require(self) -> _Episode:
        if self._ep is None:
            raise ConfigError("call reset() before using the env")
        return self._ep


def _observation_text(head: str, lines: list[str], block: str) -> str:
    feedback = f"\n\n<feedback>\n{chr(10).join(lines)}\n</feedback>" if lines else ""
    return f"{head}{feedback}\n\n{block}"


def make_env(task: Task, options: SceneReVisOptions) -> SceneReVisEnv:
    check_geometry(options.geometry)
    return SceneReVisEnv(options)
