"""The three multimodal-reasoning tools (§3.3): a vision model turns images into text.

They work on the items last shown by ``get_multiview_rendered_object`` or
``get_material_image`` (the original's implicit arguments); an explicit id list overrides.
With no vision model configured they answer from the asset catalogue and the scene's own
attributes instead, and say so under ``multimodal_source``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from buildbench.suites.legoeval.literal import model_literal
from buildbench.suites.legoeval.prompts import fill

from .context import ToolContext, unknown

FALLBACK_SOURCE = "catalogue fallback (no vision model configured): asset attributes, not pixels"
_LINE = {key: re.compile(rf"{key}\s*:\s*(.*)", re.IGNORECASE | re.DOTALL)
         for key in ("Categories", "Object Type", "Description", "Features")}


def _targets(ctx: ToolContext, ids: list[str], out: dict[str, Any]) -> list[str]:
    """The items to describe; unknown ones get an error entry in ``out`` and are skipped."""
    from .environment import scene_materials

    known_materials = set(scene_materials(ctx))
    keep = []
    for target in (list(ids) if ids else list(ctx.visual_targets)):
        if ctx.index.kind_of(target) in ("object", "door", "window") or target in known_materials:
            keep.append(target)
        else:
            out[f"{target}_error"] = unknown("object/door/window/material", target, ctx.index.objects)
    return keep


def _catalogue() -> Any:
    from buildbench.scenes.catalogue import default_catalogue

    return default_catalogue()


def record_text(ctx: ToolContext, target: str) -> str:
    """What the asset record and the scene say about an object, door, window or material."""
    opening = ctx.index.doors.get(target) or ctx.index.windows.get(target)
    obj = ctx.index.objects.get(target)
    if obj is None and opening is None:
        from buildbench.scenes.catalogue import MATERIALS

        entry = MATERIALS.get(target)
        if entry is None:
            return f"material {target}"
        _rgb, family, color = entry
        return f"material {target}: {color} {family}"
    asset_id = obj.asset_id if obj is not None else opening.asset_id  # type: ignore[union-attr]
    info = _catalogue().get(asset_id)
    fields: dict[str, Any] = {}
    if info is not None:
        fields.update(category=info.category, color=info.color, material=info.material, shape=info.shape,
                      description=info.description)
    if obj is not None:
        fields["category"] = obj.category
        fields.update({k: v for k, v in obj.attributes.items()
                       if k in ("color", "material", "shape", "description") and v})
    elif opening is not None:
        fields.setdefault("category", opening.kind)
    return "; ".join(f"{k}: {v}" for k, v in fields.items() if v) or f"asset {asset_id}"


def _category_of(ctx: ToolContext, target: str) -> str:
    obj = ctx.index.objects.get(target)
    if obj is not None:
        return obj.category
    opening = ctx.index.doors.get(target) or ctx.index.windows.get(target)
    return opening.kind if opening is not None else "material"


def mentioned_categories(ctx: ToolContext, text: str) -> list[str]:
    """Categories of the scene and catalogue named in ``text`` (singular or with an s)."""
    words = text.lower()
    names = set(_catalogue().categories()) | {o.category for o in ctx.scene.objects} | {"door", "window"}
    found = [n for n in names if re.search(rf"\b{re.escape(n)}(e?s)?\b", words)]
    return sorted(found, key=lambda n: words.find(n))


async def _ask(ctx: ToolContext, prompt: str, images: list[bytes], temperature: float = 0.0) -> str:
    from buildbench.llm import ChatRequest, Message

    assert ctx.vision_model is not None
    request = ChatRequest(messages=(Message.user(prompt, images),), temperature=temperature, max_tokens=600)
    response = await ctx.vision_model.generate(request)
    if response.error is not None:
        raise RuntimeError(f"vision model call failed: {response.error}")
    return response.text


def _field(text: str, key: str) -> str:
    match = _LINE[key].search(text)
    return match.group(1).strip().splitlines()[0].strip() if match else ""


def parse_list(text: str) -> list[str]:
    """A Python/JSON list of strings written by a model (``[]`` when it wrote none)."""
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start:
        return []
    try:
        value = model_literal(text[start:end + 1])
    except ValueError:
        return [p.strip(" '\"") for p in text[start + 1:end].split(",") if p.strip(" '\"")]
    return [str(v).strip().lower() for v in value] if isinstance(value, list | tuple) else []


def _source(ctx: ToolContext) -> str:
    if ctx.vision_model is None:
        return FALLBACK_SOURCE
    return f"vision model {ctx.vision_model.provider}:{ctx.vision_model.model}"


async def get_object_match(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"multimodal_source": _source(ctx)}
    if ctx.vision_model is None:
        categories = mentioned_categories(ctx, ctx.constraint)
    else:
        categories = parse_list(_field(await _ask(ctx, fill("object_categories", CONSTRAINT=ctx.constraint), []),
                                       "Categories"))
    out["categories"] = categories
    for target in _targets(ctx, ids, out):
        if ctx.vision_model is None:
            own = _category_of(ctx, target)
            matched = [c for c in categories if c == own]
        else:
            prompt = fill("object_match", ID=target, DESCRIPTION=record_text(ctx, target), CATEGORIES=categories)
            answer = await _ask(ctx, prompt, ctx.visual_images.get(target, []))
            matched = [c for c in parse_list(_field(answer, "Object Type")) if c in categories]
        out[f"Information of {target}"] = {"object type": matched}
    return out


async def get_property_description(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"multimodal_source": _source(ctx)}
    for target in _targets(ctx, ids, out):
        record = record_text(ctx, target)
        if ctx.vision_model is None:
            out[f"summarized visual information of {target}"] = record
            continue
        prompt = fill("property_description", ID=target, DESCRIPTION=record)
        answer = await _ask(ctx, prompt, ctx.visual_images.get(target, []))
        out[f"summarized visual information of {target}"] = _field(answer, "Description") or answer.strip()
    return out


async def get_property_verification(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"multimodal_source": _source(ctx)}
    if ctx.vision_model is None:
        features = "colour, material and shape"
    else:
        features = _field(await _ask(ctx, fill("property_features", CONSTRAINT=ctx.constraint), []),
                          "Features") or "colour, material and shape"
    out["features"] = features
    for target in _targets(ctx, ids, out):
        record = record_text(ctx, target)
        if ctx.vision_model is None:
            out[f"summarized visual information of {target}"] = record
            continue
        prompt = fill("property_verification", ID=target, DESCRIPTION=record, FEATURES=features)
        answer = await _ask(ctx, prompt, ctx.visual_images.get(target, []))
        out[f"summarized visual information of {target}"] = _field(answer, "Description") or answer.strip()
    return out


MULTIMODAL: dict[str, Callable[..., Any]] = {
    "get_object_match": get_object_match,
    "get_property_description": get_property_description,
    "get_property_verification": get_property_verification,
}
