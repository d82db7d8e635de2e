"""A stored run as supervised fine-tuning data that chat templates and TRL accept.

One conversation per episode, for any suite, in the conversational form of TRL and Hugging Face
chat templates: ``messages`` is a list of ``{"role", "content", "tool_calls", "tool_call_id"}``.

- It opens with the suite's **system prompt**: the system message of the model agent that played
  the run, or of the suite's model agent when a scripted one did (the prompt a model trained on
  the data will be given), with the run's ``-o prompts=DIR`` texts.
- Then the env's first observation (rebuilt by resetting the suite's env on the episode's task
  and seed, since the step log starts after it), then per step the agent's turn (``assistant``,
  with its tool calls) and the env's answer: a ``tool`` message per call, else a ``user`` message.
  Steps a protocol logged for itself (role ``control`` or ``protocol``: opening a stage,
  approving a design) are not the agent's words: their feedback is an env message.
- **Roles alternate strictly**: consecutive env messages are merged into one ``user`` message
  (their texts in order, a blank line apart; images kept), a ``tool`` answer is followed by a
  ``user`` message only to carry images, and what the env said after the last assistant turn is
  left out (no turn answers it). Templates that require alternation (Gemma, Llama 2) accept it.
- **Loss on the assistant turns only**, the way TRL reads it: train with
  ``SFTConfig(assistant_only_loss=True)`` on ``dataset/`` (TRL swaps in a training template of
  the model where its own lacks ``{% generation %}`` markers), or use ``dataset_turns/``, one row
  per assistant turn in TRL's prompt-completion form (``prompt``: the messages before it,
  ``completion``: that turn), whose loss TRL restricts to the completion with any chat template.
- **Images**: where an episode has images, every message's content is a list of parts
  (``{"type": "text", "text": ...}``, ``{"type": "image"}``) and the row's ``images`` column
  holds the images in the order of their parts: embedded in the datasets (``datasets.Image``),
  PNG files under ``OUT/images/`` named by relative path in ``OUT/episodes.jsonl``. An export
  without images keeps contents as plain text, which every text template reads, and its datasets
  have no ``images`` column (TRL would take them for a vision model's).
- Episode status and **metrics** travel with each row (``metrics`` is a struct of float columns,
  one per metric of the run, None where an episode lacks one), so unscored episodes can be
  filtered out: nothing is dropped here.

``OUT/episodes.jsonl`` holds the conversations, ``OUT/dataset/`` and ``OUT/dataset_turns/`` the
``datasets.Dataset`` forms (``datasets.load_from_disk``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buildbench.inputs import read_bytes

from .episode import Episode, Step
from .errors import BuildbenchError, ConfigError
from .first_observation import first_observation, png_bytes
from .prompts import prompt_folder
from .store import Store, StoreCorruptError
from .suite import Suite, get_suite
from .task import Task, file_stem

#: Step roles of the records a protocol logs for its own control calls (not the agent's words).
CONTROL_ROLES = ("control", "protocol", "judge")


@dataclass(frozen=True)
class SftExport:
    """What :func:`export_sft` wrote."""

    episodes: int
    messages: int
    images: int
    jsonl: Path
    dataset: Path


@dataclass
class _Writer:
    """Copies and writes image files under ``out/images``; ``written``: their paths relative to ``out``."""

    run_dir: Path
    out: Path
    written: set[str] = field(default_factory=set)

    def copy(self, stored: str, folder: str) -> str:
        source = self._find(stored)
        target = self.out / "images" / folder / Path(stored).name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(read_bytes(source, follow_symlinks=False))
        return self._add(target)

    def write(self, data: bytes, folder: str, name: str) -> str:
        target = self.out / "images" / folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return self._add(target)

    def _add(self, target: Path) -> str:
        relative = target.relative_to(self.out).as_posix()
        self.written.add(relative)
        return relative

    def keep(self, used: set[str]) -> None:
        """Delete the images no message refers to (what the env showed after the last turn)."""
        for relative in self.written - used:
            (self.out / relative).unlink()
        self.written &= used

    def _find(self, stored: str) -> Path:
        # Step image paths are relative to the run's artifact folder (older records: to the run).
        for base in (self.run_dir / "artifacts", self.run_dir):
            path = (base / stored).resolve()
            if path.is_file() and path.is_relative_to(self.run_dir.resolve()):
                if path.stat().st_nlink > 1:  # a hard link made in the run may name any file on the disk
                    raise BuildbenchError(f"{path}: image {stored!r} of a stored step has another hard link; "
                                          "refused (it may be a file from outside the run)")
                return path
        raise BuildbenchError(f"{self.run_dir}: image {stored!r} of a stored step is missing")


def _message(role: str, text: str, *, images: list[str] | None = None,
             tool_calls: list[dict[str, Any]] | None = None, tool_call_id: str = "") -> dict[str, Any]:
    # ``images`` is working data: `_finish` turns it into content parts or drops it.
    return {"role": role, "content": text, "images": images or [], "tool_calls": tool_calls or [],
            "tool_call_id": tool_call_id}


def _tool_calls(step: Step) -> list[dict[str, Any]]:
    return [{"id": str(c.get("id") or f"call_{step.index}_{i}"), "type": "function",
             "function": {"name": str(c.get("name")), "arguments": json.dumps(c.get("arguments") or {},
                                                                              sort_keys=True)}}
            for i, c in enumerate(step.tool_calls)]


def _step_messages(step: Step, images: list[str]) -> list[dict[str, Any]]:
    """The messages of one step: the agent's turn (unless a protocol record) and the env's answer."""
    if step.role in CONTROL_ROLES:
        return [_message("user", step.observation_text, images=images)]
    if step.action_text is None and not step.tool_calls:
        return []  # the agent produced nothing (an API failure): no turn to learn from
    calls = _tool_calls(step)
    out = [_message("assistant", step.action_text or "", tool_calls=calls)]
    if not calls:
        return [*out, _message("user", step.observation_text, images=images)]
    # The step log keeps the env's answer to all calls as one text: the first call carries it.
    first = calls[0]["id"]
    for k, call in enumerate(calls):
        text = step.observation_text if k == 0 else f"(answered together with call {first})"
        out.append(_message("tool", text, tool_call_id=call["id"]))
    if images:
        out.append(_message("user", "Images of the result.", images=images))
    return out


def _alternate(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive ``user`` messages merged, and nothing after the last assistant turn."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if out and message["role"] == "user" and out[-1]["role"] == "user":
            last = out[-1]
            texts = [t for t in (last["content"], message["content"]) if t]
            out[-1] = {**last, "content": "\n\n".join(texts), "images": last["images"] + message["images"]}
        else:
            out.append(message)
    while out and out[-1]["role"] != "assistant":
        out.pop()
    return out


def _finish(messages: list[dict[str, Any]], parts: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """The messages in their exported form, and the images in the order of their parts."""
    images: list[str] = []
    out = []
    for message in messages:
        content: Any = message["content"]
        if parts:
            content = [{"type": "image", "text": None} for _ in message["images"]]
            content.append({"type": "text", "text": message["content"]})
        images += message["images"]
        out.append({k: v for k, v in message.items() if k != "images"} | {"content": content})
    return out, images


def _folder(episode: Episode) -> str:
    return f"{file_stem(episode.task_id)}-s{episode.sample}"


def suite_system_prompt(suite: Suite, agent: str, task: Task, options: Mapping[str, Any]) -> str:
    """The system message of ``agent`` when it is one of the suite's model agents, else of the
    suite's first model agent that has one ("" when none has): the agent is built with a scripted
    model, never called, and asked for its ``system_prompt``. ``options`` are a run's given options
    (its stored config's), parsed here into the suite's options class as a run parses them."""
    from buildbench.llm import ScriptedChat

    parsed = suite.parse_options(options)
    model_agents = [name for name, spec in suite.agents.items() if spec.needs_model]
    for name in sorted(model_agents, key=lambda n: n != agent):
        with prompt_folder(getattr(parsed, "prompts", None)):
            built = suite.agents[name].factory(task, ScriptedChat(), parsed)
        text = getattr(built, "system_prompt", None)
        if isinstance(text, str) and text.strip():
            return text
    return ""


def _first_observation(config: Any, task: Task, seed: int, writer: _Writer, folder: str) -> dict[str, Any]:
    try:
        observation = first_observation(config.suite, config.options, task, seed)
    except Exception as exc:
        raise ConfigError(f"cannot rebuild the first observation of task {task.id}: "
                          f"{type(exc).__name__}: {exc}".splitlines()[0]) from exc
    images = [writer.write(png_bytes(img), folder, f"reset_view{i}.png") for i, img in enumerate(observation.images)]
    return _message("user", observation.text, images=images)


def _conversation(episode: Episode, system: str, first: dict[str, Any], writer: _Writer) -> list[dict[str, Any]]:
    folder = _folder(episode)
    messages = [_message("system", system)] if system else []
    messages.append(first)
    for step in episode.steps:
        images = [writer.copy(p, folder) for p in step.image_paths]
        messages += _step_messages(step, images)
    return _alternate(messages)


def _row(episode: Episode, messages: list[dict[str, Any]], parts: bool) -> dict[str, Any]:
    exported, images = _finish(messages, parts)
    return {
        "id": f"{episode.suite}/{_folder(episode)}",
        "suite": episode.suite,
        "task_id": episode.task_id,
        "sample": episode.sample,
        "seed": episode.seed,
        "agent": episode.agent,
        "protocol": episode.protocol,
        "status": episode.status,
        "metrics": {k: float(v) for k, v in sorted(episode.metrics.items()) if isinstance(v, int | float)},
        "messages": exported,
        "images": images,
    }


def _features(metric_names: list[str], parts: bool, columns: tuple[str, ...]) -> Any:
    from datasets import Features, Image, List, Value

    content: Any = List({"type": Value("string"), "text": Value("string")}) if parts else Value("string")
    call = {"id": Value("string"), "type": Value("string"),
            "function": {"name": Value("string"), "arguments": Value("string")}}
    message = {"role": Value("string"), "content": content, "tool_calls": List(call),
               "tool_call_id": Value("string")}
    fields = {"id": Value("string"), "suite": Value("string"), "task_id": Value("string"),
              "sample": Value("int32"), "seed": Value("int64"), "agent": Value("string"),
              "protocol": Value("string"), "status": Value("string"),
              "metrics": {name: Value("float64") for name in metric_names},
              "turn": Value("int32"), "images": List(Image())}
    fields.update({name: List(message) for name in ("messages", "prompt", "completion")})
    return Features({name: fields[name] for name in columns})


def _dataset_row(row: dict[str, Any], out: Path, metric_names: list[str]) -> dict[str, Any]:
    metrics = {name: row["metrics"].get(name) for name in metric_names}
    return {**row, "metrics": metrics, "images": [str(out / p) for p in row["images"]]}


def _turn_rows(row: dict[str, Any]) -> list[dict[str, Any]]:
    """One prompt-completion row per assistant turn (TRL restricts the loss to the completion)."""
    messages: list[dict[str, Any]] = row["messages"]
    out: list[dict[str, Any]] = []
    for k, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        prompt = messages[:k]
        # The images a prompt's parts refer to: as many as its image parts, from the start.
        shown = sum(1 for m in prompt if isinstance(m["content"], list) for p in m["content"] if p["type"] == "image")
        base = {key: v for key, v in row.items() if key not in ("messages", "images")}
        out.append({**base, "turn": len(out), "prompt": prompt, "completion": [message],
                    "images": row["images"][:shown]})
    return out


@contextmanager
def _quiet_datasets() -> Iterator[None]:
    """No progress bars from ``datasets`` while we write (the CLI prints one line)."""
    from datasets.utils import logging as ds_logging

    was_enabled = ds_logging.is_progress_bar_enabled()
    ds_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            ds_logging.enable_progress_bar()


def export_sft(run_dir: str | Path, out_dir: str | Path) -> SftExport:
    """Write the episodes of the run in ``run_dir`` as SFT data into the new folder ``out_dir``.

    Raises:
        ConfigError: ``out_dir`` is not empty, or a task of the run can no longer be loaded.
    """
    from datasets import Dataset

    from .runner import RunConfig, select_tasks

    run_dir, out = Path(run_dir), Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"{out} already exists and is not an empty folder; choose a new --out")
    with Store(run_dir, create=False) as store:
        stored = store.manifest().get("config")
        try:
            config = RunConfig(**stored)  # type: ignore[arg-type]
        except TypeError:  # absent, not a mapping, or fields this version does not know
            raise StoreCorruptError(f"{store.path}: the manifest holds no run config this version reads "
                                    "(damaged, or not a run)") from None
        episodes = list(store.episodes())
    suite = get_suite(config.suite)
    tasks = {t.id: t for t in select_tasks(suite, config)}
    out.mkdir(parents=True, exist_ok=True)
    writer = _Writer(run_dir, out)
    conversations = []
    for episode in episodes:
        if episode.task_id not in tasks:
            raise ConfigError(f"task {episode.task_id!r} of {run_dir} is not in its split or task file any more")
        task = tasks[episode.task_id]
        system = suite_system_prompt(suite, episode.agent, task, dict(config.options))
        first = _first_observation(config, task, episode.seed, writer, _folder(episode))
        conversations.append((episode, _conversation(episode, system, first, writer)))
    parts = any(m["images"] for _, messages in conversations for m in messages)
    rows = [_row(episode, messages, parts) for episode, messages in conversations]
    writer.keep({p for row in rows for p in row["images"]})
    jsonl = out / "episodes.jsonl"
    with open(jsonl, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    metric_names = sorted({name for row in rows for name in row["metrics"]})
    full = [_dataset_row(r, out, metric_names) for r in rows]
    turns = [t for r in full for t in _turn_rows(r)]
    base = ("id", "suite", "task_id", "sample", "seed", "agent", "protocol", "status", "metrics")
    # TRL takes a dataset with an ``images`` column for a vision model's: only exports with images have one.
    seen: tuple[str, ...] = ("images",) if parts else ()
    with _quiet_datasets():
        for folder, table, columns in (("dataset", full, (*base, "messages", *seen)),
                                       ("dataset_turns", turns, (*base, "turn", "prompt", "completion", *seen))):
            # by columns: a run whose episodes have no assistant turn still gets an (empty) table
            data = {name: [row[name] for row in table] for name in columns}
            Dataset.from_dict(data, features=_features(metric_names, parts, columns)).save_to_disk(str(out / folder))
    return SftExport(len(rows), sum(len(r["messages"]) for r in rows), len(writer.written), jsonl, out / "dataset")
