"""Every suite as a Gymnasium environment: ``buildbench/<Suite>-v0``.

Importing this module registers one id per suite of the ``buildbench.suites`` entry-point group.
Gymnasium 1.x has no plugin entry points of its own; its convention is ``gym.register_envs(module)``,
which names the import for linters and IDEs (``gymnasium.make`` also accepts the module-qualified
form ``"buildbench.gym:buildbench/Example-v0"``, which imports this module)::

    import gymnasium as gym
    import buildbench.gym

    gym.register_envs(buildbench.gym)
    env = gym.make("buildbench/Example-v0", task=0, split="demo", seed=7)
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step('{"blocks": [...]}')

    envs = gym.make_vec("buildbench/Example-v0", num_envs=2, vectorization_mode="async", split="demo")

Vector envs work in both modes: :class:`AnyText` has its own shared-memory layout (code points),
so ``AsyncVectorEnv``'s default ``shared_memory=True`` holds any Unicode text of the space's bound.
A process that has already rendered (an env of a suite with images, made before the vector env)
cannot hand its OpenGL state to forked workers: pass ``vector_kwargs={"context": "forkserver"}``
there, or DreamHouse's workers render no views.

Description:
    One construction task of a suite, as the suite's own env plays it: the agent's text goes to
    the env, the env's feedback comes back. Nothing of a suite is imported before ``make``.

Action Space:
    :class:`AnyText`: the agent's reply as text (code, JSON, prose). One JSON object
    ``{"tool_calls": [{"name": ..., "arguments": {...}}]}`` is sent as function calls (the
    suite's tools are listed in ``info["tools"]`` at reset), and ``{"control": NAME, "args": {...}}``
    calls one of the env's controls (``info["controls"]``: what a protocol does besides stepping,
    such as BuildArena's ``begin`` and ``set_final``), so RL code can play every part of an episode.

Observation Space:
    ``Dict(text=AnyText, state=AnyText)``: the instructions or feedback, and the env's structured
    state as JSON text, each at most ``max_observation_chars`` characters (an observation over the
    bound raises a ValueError that names it; pass a larger bound to ``make``). Images of the observation are kept as arrays in :attr:`BuildbenchEnv.images`.
    The state's fields are the suite's state record (``<suite>/spaces.py``, ``Env.state_type``):
    ``info["state_schema"]`` at reset is the record's standard JSON Schema (draft 2020-12, generated
    from the same dataclass by pydantic), each property with its ``type``, ``description`` and
    ``x-unit`` (``m``, ``s``, ``deg``…), for example::

        {"title": "TowerState", "type": "object", "properties": {"blocks": {"type": "array",
         "items": {...}, "description": "The current design, ... metres, z up ...", "x-unit": "m"}},
         "additionalProperties": false, ...}

    ``info["action_schema"]`` describes the same way the structured ``Action.data`` that scripted
    agents give the suite's env directly (``Env.action_type``, such as BuildArena's
    ``{"op", "params"}``; here such a payload travels as text or tool calls); None where the suite
    takes only text and tool calls.

Rewards:
    The suite env's reward for each step. On the step that ends an episode ``info["metrics"]``
    holds the suite's verifier scores of the episode's outcome (or ``info["score_error"]`` when
    it could not be scored: an error is never a score).

Starting State:
    The selected task (``task``: index or id in ``split``, generated with ``seed``); another
    task with ``reset(options={"task": ...})``.

Episode End:
    ``terminated`` when the env says the build is complete or has failed for good; ``truncated``
    when the suite's own budget ran out or after ``max_turns`` steps (both scored: the last
    step's ``info["metrics"]``). Gymnasium's own ``max_episode_steps`` truncates from outside the
    env, which then never scores the episode: call ``env.unwrapped.score()`` for that.

Arguments:
    ``task``, ``split`` (default ``"default"``), ``seed`` (task generation, and the episode seed
    of a ``reset()`` without one), ``options`` (the suite's ``-o`` options, parsed once into its options class;
    a bad one, a bad ``split`` or ``task`` is a ``ConfigError``),
    ``max_observation_chars`` (the bound of each observation text, default
    :data:`MAX_OBSERVATION_CHARS`), ``max_turns`` (steps per episode at most; None: the suite's
    own budget only).

Version History:
    v0: first version.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, overload

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

from buildbench.harness import Env, Observation, Suite, Task, get_suite, suite_names
from buildbench.harness.errors import ConfigError
from buildbench.harness.option_model import ModelOptions
from buildbench.harness.prompts import prompt_folder
from buildbench.harness.record import Record
from buildbench.harness.runner import stored_outcome

from .integrations.text import apply_text, plain_json, select_task

__all__ = ["AnyText", "BuildbenchEnv", "SharedTexts", "env_id", "record_schema", "register_suites"]

#: Id namespace of every buildbench environment.
NAMESPACE = "buildbench"
#: Longest action text accepted, in characters (a long Blender script is about 100 000).
MAX_ACTION_CHARS = 1_000_000
#: Longest observation text or state JSON, in characters, unless ``make(max_observation_chars=N)``.
#: Reset observations of the suites are 0.5-6 thousand characters; an async vector env keeps
#: 4 bytes per character of the bound per env in shared memory (4 MB here).
MAX_OBSERVATION_CHARS = 1_000_000
#: Length of a random action sampled from the action space (``sample()``): probes, not designs.
SAMPLE_CHARS = 64

#: How the bundled suites spell their names in environment ids; a plugin's id capitalises its name.
_ID_NAMES = {"dreamhouse": "DreamHouse", "buildarena": "BuildArena", "bimedit": "BimEdit",
             "legoeval": "LegoEval", "scenerevis": "SceneReVis"}

#: Suites whose reset is not reproducible observation for observation, and why. Gymnasium's
#: checker skips its equality checks for ids registered ``nondeterministic``.
_NONDETERMINISTIC = {
    "bimedit": "the prompt names the episode's working copy of the IFC model, a fresh temporary folder",
}


class AnyText(spaces.Text):
    """Text over all of Unicode, up to ``max_length`` characters.

    :class:`gymnasium.spaces.Text` accepts only the characters of its charset; model text and
    env feedback use any character (×, —, °, CJK…), so membership here is any string of an allowed
    length. Random samples are printable ASCII of at most :data:`SAMPLE_CHARS` characters.
    """

    def __init__(self, max_length: int, *, seed: int | np.random.Generator | None = None) -> None:
        super().__init__(max_length, min_length=0, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            return super().sample(mask, probability)
        length = int(self.np_random.integers(1, SAMPLE_CHARS + 1))
        codes = self.np_random.integers(32, 127, size=length)
        return "".join(map(chr, codes))

    def __repr__(self) -> str:
        return f"AnyText({self.max_length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnyText) and self.max_length == other.max_length


# AnyText in shared memory (async vector envs): per env, one int32 length then the text's code
# points. Gymnasium's own Text layout indexes its charset and cannot hold other characters.
@create_shared_memory.register(AnyText)
def _create_text_memory(space: AnyText, n: int = 1, ctx: Any = None) -> Any:
    import multiprocessing

    return (ctx or multiprocessing).Array("i", n * (space.max_length + 1))


@write_to_shared_memory.register(AnyText)
def _write_text_memory(space: AnyText, index: int, value: str, memory: Any) -> None:
    if value not in space:
        raise ValueError(f"{space!r}: cannot hold a text of {len(value)} characters")
    size = space.max_length + 1
    slot = np.frombuffer(memory.get_obj(), dtype=np.int32)[index * size:(index + 1) * size]
    slot[0] = len(value)
    slot[1:1 + len(value)] = np.frombuffer(value.encode("utf-32-le"), dtype="<u4")


@read_from_shared_memory.register(AnyText)
def _read_text_memory(space: AnyText, memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(np.frombuffer(memory.get_obj(), dtype=np.int32).reshape((n, space.max_length + 1)))


class SharedTexts(Sequence[str]):
    """The texts of a vector env's sub-envs, read from shared memory when indexed.

    ``AsyncVectorEnv`` reads its shared observation memory once and expects a view that follows
    the workers' writes (a NumPy view for array spaces); this is that view for text. A copy
    (``copy.deepcopy``, which the vector env makes by default, or pickling) is a plain tuple.
    """

    def __init__(self, rows: np.ndarray) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(len(self))[index])
        row = self._rows[index]
        return bytes(row[1:1 + int(row[0])].astype("<u4").tobytes()).decode("utf-32-le")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return tuple, (tuple(self),)

    def __repr__(self) -> str:
        return f"SharedTexts({tuple(self)!r})"


class BuildbenchEnv(gymnasium.Env[dict[str, str], str]):
    """One suite's env behind Gymnasium's API (see the module docstring).

    Args:
        suite: A registered suite name.
        task: Index or id of the task in ``split``.
        split: The suite's task split.
        seed: Task-generation seed, and the episode seed of a first ``reset()`` without one.
        options: The suite's ``-o`` options (text or typed values), parsed once into the suite's
            options class (:attr:`options`); an unknown key or a bad value is a ConfigError.
        max_observation_chars: Longest observation text or state JSON, in characters.
        max_turns: Truncate (and score) an episode after this many steps; None: no bound of ours.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, suite: str, task: int | str = 0, split: str = "default", seed: int = 0,
                 options: dict[str, Any] | None = None, max_observation_chars: int = MAX_OBSERVATION_CHARS,
                 max_turns: int | None = None) -> None:
        self.suite: Suite = get_suite(suite)
        where = f"buildbench/{env_name(suite)}"
        if split not in self.suite.splits:
            raise ConfigError(f"{where}: no split {split!r}; splits: {', '.join(self.suite.splits)}")
        #: The suite's typed options, the object every env of this wrapper is made with.
        self.options: ModelOptions = self.suite.options_model().parse(options or {}, where=where)
        self._where = where
        self._tasks = self.suite.load_tasks(split, int(seed))
        self.task: Task = select_task(self._tasks, task, where=where)
        self._make_seed = int(seed)
        self.action_space = AnyText(MAX_ACTION_CHARS)
        if max_observation_chars < 1:
            raise ConfigError(f"{where}: max_observation_chars must be >= 1, got {max_observation_chars}")
        if max_turns is not None and max_turns < 1:
            raise ConfigError(f"{where}: max_turns must be >= 1 or None, got {max_turns}")
        self.max_turns = max_turns
        self.observation_space = spaces.Dict({"text": AnyText(max_observation_chars),  # type: ignore[assignment]
                                              "state": AnyText(max_observation_chars)})
        self._env: Env | None = None
        self._turn = 0
        self._ended = False
        #: The images of the latest observation, as RGB(A) uint8 arrays or PNG bytes.
        self.images: list[np.ndarray | bytes] = []

    @contextmanager
    def _prompts(self) -> Iterator[None]:
        with prompt_folder(getattr(self.options, "prompts", None)):
            yield

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, str], dict[str, Any]]:
        if seed is None and self._np_random is None:
            seed = self._make_seed  # the first episode of an env made with seed=N is reproducible
        super().reset(seed=seed)
        if options and "task" in options:
            self.task = select_task(self._tasks, options["task"], where=self._where)
        episode_seed = int(self.np_random.integers(0, 2**31 - 1))
        self.close()
        with self._prompts():
            self._env = self.suite.make_env(self.task, self.options)
            observation, info = self._env.reset(self.task, seed=episode_seed)
        self._turn, self._ended = 0, False
        info = plain_json(info)
        info.update(task_id=self.task.id, episode_seed=episode_seed,
                    tools=[_tool_spec(t) for t in self._env.tools],
                    controls={name: c.doc for name, c in sorted(self._env.controls.items())},
                    state_schema=record_schema(self._env.state_type),
                    action_schema=record_schema(self._env.action_type))
        return self._observe(observation), info

    def step(self, action: str) -> tuple[dict[str, str], float, bool, bool, dict[str, Any]]:
        if self._env is None or self._ended:
            raise gymnasium.error.ResetNeeded(f"{self._where}: call reset() before step() (the episode ended)")
        if action not in self.action_space:
            kind = f"{len(action)} characters" if isinstance(action, str) else type(action).__name__
            raise ValueError(f"{self._where}: an action is text of at most {MAX_ACTION_CHARS} characters, got {kind}")
        with self._prompts():
            result = apply_text(self._env, action, self._turn)
        self._turn += 1
        info = plain_json(result.info)
        terminated = bool(result.terminated)
        truncated = bool(result.truncated) or (not terminated and self._turn == self.max_turns)
        if terminated or truncated:
            self._ended = True
            info.update(self._final_scores())
        return self._observe(result.observation), float(result.reward), terminated, truncated, info

    def score(self) -> dict[str, float]:
        """The suite verifier's metrics for the episode's outcome so far (raises when it cannot score)."""
        if self._env is None:
            raise gymnasium.error.ResetNeeded(f"{self._where}: nothing to score before reset()")
        return self.suite.verify(self.task, self._env.outcome())

    def outcome(self) -> dict[str, Any]:
        """The env's product of the episode so far (what the verifier scores), as plain JSON."""
        if self._env is None:
            raise gymnasium.error.ResetNeeded(f"{self._where}: no outcome before reset()")
        return plain_json(stored_outcome(self._env.outcome()))

    def _final_scores(self) -> dict[str, Any]:
        try:
            return {"metrics": plain_json(self.score())}
        except Exception as exc:  # an unscorable episode says why; it never gets a number
            return {"score_error": f"{type(exc).__name__}: {exc}".splitlines()[0]}

    def _observe(self, observation: Observation) -> dict[str, str]:
        self.images = list(observation.images)
        out = {"text": observation.text, "state": json.dumps(plain_json(observation.state), sort_keys=True)}
        bound = self.observation_space["text"].max_length  # type: ignore[index]
        for key, text in out.items():
            if len(text) > bound:  # cut, it would mislead the agent; the bound is the user's to raise
                raise ValueError(f"{self._where}: the observation's {key} has {len(text)} characters, over "
                                 f"max_observation_chars={bound}; make the env with a larger bound")
        return out

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None


def record_schema(record: type[Record] | None) -> dict[str, Any] | None:
    """The standard JSON Schema of a suite's state or action record (None for none)."""
    return None if record is None else record.json_schema()


def _tool_spec(tool: Any) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": plain_json(tool.parameters)}


def env_name(suite: str) -> str:
    """The environment name of ``suite`` (``dreamhouse`` → ``DreamHouse``; plugins: capitalised)."""
    return _ID_NAMES.get(suite) or "".join(part[:1].upper() + part[1:] for part in suite.replace("_", "-").split("-"))


def env_id(suite: str, version: int = 0) -> str:
    """The Gymnasium id of ``suite``, e.g. ``buildbench/DreamHouse-v0``."""
    return f"{NAMESPACE}/{env_name(suite)}-v{version}"


def _make(suite: str) -> Any:
    def make(**kwargs: Any) -> BuildbenchEnv:
        return BuildbenchEnv(suite, **kwargs)

    make.__name__ = f"make_{suite}"
    return make


def register_suites() -> list[str]:
    """Register every suite of the entry-point group (again: plugins installed since are added)."""
    ids = []
    for name in suite_names():
        ident = env_id(name)
        if ident not in gymnasium.registry:
            gymnasium.register(ident, entry_point=_make(name), nondeterministic=name in _NONDETERMINISTIC,
                               disable_env_checker=False)
        ids.append(ident)
    return ids


register_suites()
