"""Step 3b: run a tool plan as a DAG (§4.4).

Every node waits for its predecessors, then chooses its arguments and calls its tool; nodes
with no path between them run at the same time (synchronous tools in worker threads,
multimodal ones on the event loop). Results of textual and environment tools are cached by
``(tool, arguments)`` for the whole scene, so a later constraint (or a parallel branch)
asking the same thing reuses the answer. A failing tool is recorded as an error entry and
the rest of the plan goes on.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from buildbench.suites.legoeval.tools import TOOLS, ToolArgumentError, ToolContext, call_tool, is_image_key
from buildbench.suites.legoeval.tools.environment import SEP

from .plan import ToolPlan

#: ``choose(tool, outputs_so_far) -> arguments``.
ArgumentChooser = Callable[[str, dict[str, Any]], Awaitable[list[Any]]]
_VISUAL_TOOLS = ("get_multiview_rendered_object", "get_material_image")


@dataclass
class CallRecord:
    """One executed node: its arguments, outputs, timing and whether it was reused."""

    tool: str
    args: list[Any]
    text: dict[str, Any] = field(default_factory=dict)
    image_keys: list[str] = field(default_factory=list)
    reused: bool = False
    error: str | None = None
    started_s: float = 0.0
    ended_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "args": self.args, "reused": self.reused, "error": self.error,
                "image_keys": self.image_keys, "started_s": round(self.started_s, 4),
                "ended_s": round(self.ended_s, 4)}


@dataclass
class Execution:
    """The merged outputs of one plan: text by key, images (PNG bytes) by key, and the calls."""

    text: dict[str, Any] = field(default_factory=dict)
    images: dict[str, bytes] = field(default_factory=dict)
    calls: list[CallRecord] = field(default_factory=list)


class ToolCache:
    """Results by ``(tool, arguments)`` for one scene; concurrent identical calls share one run."""

    def __init__(self) -> None:
        self._futures: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.hits = 0

    @staticmethod
    def key(tool: str, args: list[Any]) -> str:
        return json.dumps([tool, args], sort_keys=True)

    async def get(self, ctx: ToolContext, tool: str, args: list[Any]) -> tuple[dict[str, Any], bool]:
        if TOOLS[tool].group == "multimodal":  # depends on the constraint, never shared
            return await call_tool(ctx, tool, args), False
        key = self.key(tool, args)
        if key in self._futures:
            self.hits += 1
            return await asyncio.shield(self._futures[key]), True
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._futures[key] = future
        try:
            result = await call_tool(ctx, tool, args)
        except BaseException as exc:
            del self._futures[key]
            future.set_exception(exc)
            future.exception()  # retrieved here so asyncio does not warn when nobody else waits
            raise
        future.set_result(result)
        return result, False


def _restore_visuals(ctx: ToolContext, tool: str, args: list[Any], result: dict[str, Any]) -> None:
    # A reused multiview/material result must still point the multimodal tools at its items.
    if tool in _VISUAL_TOOLS:
        for target in args:
            images = [v for k, v in result.items() if is_image_key(k) and k.startswith(f"{target}{SEP}")]
            ctx.remember_visual(str(target), images)


def _ancestors(plan: ToolPlan, node: str) -> set[str]:
    seen: set[str] = set()
    todo = list(plan.predecessors(node))
    while todo:
        parent = todo.pop()
        if parent not in seen:
            seen.add(parent)
            todo.extend(plan.predecessors(parent))
    return seen


def _merge(records: list[CallRecord], images: dict[str, dict[str, bytes]], keep: set[str] | None = None) -> Execution:
    """The outputs of ``records`` (those in ``keep``; all when None), merged in plan order."""
    out = Execution()
    for record in records:
        if keep is not None and record.tool not in keep:
            continue
        out.text.update(record.text)
        if record.error is not None:
            out.text[f"{record.tool}_error"] = record.error
        out.images.update(images.get(record.tool, {}))
        out.calls.append(record)
    return out


async def execute_plan(ctx: ToolContext, plan: ToolPlan, choose: ArgumentChooser, cache: ToolCache) -> Execution:
    """Run ``plan``; independent nodes overlap. Returns the merged outputs and call records.

    What a node sees when it chooses its arguments is its ancestors' outputs, and the plan's
    outputs are merged, in plan order: tools that answer under the same key (the door, window and
    object lists all key by room) then give the same prompt and the same images whichever thread
    finishes first.
    """
    records = {node: CallRecord(node, []) for node in plan.nodes}
    images: dict[str, dict[str, bytes]] = {node: {} for node in plan.nodes}
    in_order = list(records.values())
    finished = {node: asyncio.Event() for node in plan.nodes}
    t0 = time.perf_counter()

    async def run(node: str) -> None:
        try:
            for parent in plan.predecessors(node):
                await finished[parent].wait()
            record = records[node]
            record.started_s = time.perf_counter() - t0
            spec = TOOLS[node]
            try:
                seen = _merge(in_order, images, _ancestors(plan, node)).text
                record.args = await choose(node, seen) if spec.param else []
                if spec.param and not spec.optional and not record.args:
                    record.error = "no arguments selected; not run"
                else:
                    result, record.reused = await cache.get(ctx, node, record.args)
                    if record.reused:
                        _restore_visuals(ctx, node, record.args, result)
                    for key, value in result.items():
                        if is_image_key(key):
                            images[node][key] = value
                            record.image_keys.append(key)
                        else:
                            record.text[key] = value
            except (ToolArgumentError, RuntimeError, ValueError, KeyError, OSError) as exc:
                record.error = f"{type(exc).__name__}: {exc}"
            record.ended_s = time.perf_counter() - t0
        finally:
            finished[node].set()

    await asyncio.gather(*(run(node) for node in plan.nodes))
    return _merge(in_order, images)
