"""A stored run as supervised fine-tuning data: chat JSONL plus a Hugging Face ``datasets`` dataset.

One conversation per episode, for any suite: the env's first observation (rebuilt by resetting
the suite's env on the episode's task and seed, since the step log starts after it) is the first
user message; then each step gives an assistant message (the agent's text and tool calls) and
the env's answer (a ``tool`` message per call, or a ``user`` message). Steps a protocol logged for
itself (role ``control`` or ``protocol``: opening a stage, approving a design) are not the agent's
words; their feedback is kept as a user message and nothing of them is trained on.

``OUT/episodes.jsonl`` holds the conversations, ``OUT/images/`` the observation images as PNG
files (message ``images`` are paths relative to ``OUT``), ``OUT/dataset/`` the same rows as a
``datasets.Dataset`` (``datasets.load_from_disk``), where ``loss_mask`` has one entry per
message: 1 for assistant turns, 0 for everything else. Episode status and metrics travel with
each row, so unscored episodes can be filtered out (nothing is dropped here).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buildbench.inputs import read_bytes

from .episode import Episode, Step
from .errors import BuildbenchError, ConfigError
from .first_observation import first_observation, png_bytes
from .store import Store
from .suite import get_suite
from .task import Task

#: Step roles of the records a protocol logs for its own control calls (not the agent's words).
CONTROL_ROLES = ("control", "protocol")


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
    """Copies and writes image files under ``out/images`` and counts them."""

    run_dir: Path
    out: Path
    images: int = 0

    def copy(self, stored: str, folder: str) -> str:
        source = self._find(stored)
        target = self.out / "images" / folder / Path(stored).name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(read_bytes(source, follow_symlinks=False))
        self.images += 1
        return target.relative_to(self.out).as_posix()

    def write(self, data: bytes, folder: str, name: str) -> str:
        target = self.out / "images" / folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.images += 1
        return target.relative_to(self.out).as_posix()

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


def _message(role: str, content: str, *, name: str = "", images: list[str] | None = None,
             tool_calls: list[dict[str, Any]] | None = None, tool_call_id: str = "") -> dict[str, Any]:
    return {"role": role, "content": content, "name": name, "images": images or [],
            "tool_calls": tool_calls or [], "tool_call_id": tool_call_id}


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
    out = [_message("assistant", step.action_text or "", name=step.role, tool_calls=calls)]
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


def _folder(episode: Episode) -> str:
    return f"{re.sub(r'[^A-Za-z0-9_.-]', '_', episode.task_id)}-s{episode.sample}"


def _first_observation(config: Any, task: Task, seed: int, writer: _Writer, folder: str) -> dict[str, Any]:
    try:
        observation = first_observation(config.suite, config.options, task, seed)
    except Exception as exc:
        raise ConfigError(f"cannot rebuild the first observation of task {task.id}: "
                          f"{type(exc).__name__}: {exc}".splitlines()[0]) from exc
    images = [writer.write(png_bytes(img), folder, f"reset_view{i}.png") for i, img in enumerate(observation.images)]
    return _message("user", observation.text, images=images)


def _row(episode: Episode, first: dict[str, Any], writer: _Writer) -> dict[str, Any]:
    folder = _folder(episode)
    messages = [first]
    for step in episode.steps:
        images = [writer.copy(p, folder) for p in step.image_paths]
        messages += _step_messages(step, images)
    return {
        "id": f"{episode.suite}/{folder}",
        "suite": episode.suite,
        "task_id": episode.task_id,
        "sample": episode.sample,
        "seed": episode.seed,
        "agent": episode.agent,
        "protocol": episode.protocol,
        "status": episode.status,
        "metrics": json.dumps(episode.metrics, sort_keys=True),
        "messages": messages,
        "loss_mask": [int(m["role"] == "assistant") for m in messages],
    }


def _features() -> Any:
    from datasets import Features, List, Value

    message = {"role": Value("string"), "content": Value("string"), "name": Value("string"),
               "images": List(Value("string")), "tool_calls": Value("string"), "tool_call_id": Value("string")}
    return Features({"id": Value("string"), "suite": Value("string"), "task_id": Value("string"),
                     "sample": Value("int32"), "seed": Value("int64"), "agent": Value("string"),
                     "protocol": Value("string"), "status": Value("string"), "metrics": Value("string"),
                     "messages": List(message), "loss_mask": List(Value("int8"))})


def _dataset_row(row: dict[str, Any]) -> dict[str, Any]:
    # Arrow needs one type per column: tool calls travel as JSON text in the dataset.
    messages = [{**m, "tool_calls": json.dumps(m["tool_calls"])} for m in row["messages"]]
    return {**row, "messages": messages}


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
        config = RunConfig(**store.manifest()["config"])
        episodes = list(store.episodes())
    tasks = {t.id: t for t in select_tasks(get_suite(config.suite), config)}
    out.mkdir(parents=True, exist_ok=True)
    writer = _Writer(run_dir, out)
    rows = []
    for episode in episodes:
        if episode.task_id not in tasks:
            raise ConfigError(f"task {episode.task_id!r} of {run_dir} is not in its split or task file any more")
        first = _first_observation(config, tasks[episode.task_id], episode.seed, writer, _folder(episode))
        rows.append(_row(episode, first, writer))
    jsonl = out / "episodes.jsonl"
    with open(jsonl, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    dataset = out / "dataset"
    with _quiet_datasets():
        Dataset.from_list([_dataset_row(r) for r in rows], features=_features()).save_to_disk(str(dataset))
    return SftExport(len(rows), sum(len(r["messages"]) for r in rows), writer.images, jsonl, dataset)
