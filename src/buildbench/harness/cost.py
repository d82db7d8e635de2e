"""Cost beside quality: tokens, requests and wall time per episode and per solved task, and
money from a price table the user supplies (``--prices FILE``).

A price file is JSON or YAML::

    currency: USD                      # optional, a label only
    models:
      "openai:gpt-4o":   {input_per_million: 2.5, output_per_million: 10.0}
      "vllm:Qwen/Qwen2.5-7B": {input_per_million: 0.0, output_per_million: 0.0, per_request: 0.0001}

A model is looked up by its full spec (``provider:model``, any ``@base_url`` left out), then by
the model name alone. Prices are non-negative finite numbers; anything else is refused with one
line naming the file and the field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buildbench.inputs import read_text

from .episode import Episode, is_scored
from .errors import ConfigError

_PRICE_KEYS = ("input_per_million", "output_per_million", "per_request")


@dataclass(frozen=True)
class Prices:
    """Per model spec: price per million input and output tokens and per request."""

    currency: str
    models: Mapping[str, Mapping[str, float]]

    def for_model(self, model: str | None) -> Mapping[str, float] | None:
        if not model:
            return None
        spec = model.split("@", 1)[0]
        return self.models.get(spec) or self.models.get(spec.split(":", 1)[-1])


def load_prices(path: str | Path) -> Prices:
    """Read and check a price file (JSON or YAML).

    Raises:
        ConfigError: Unreadable file or a bad field, naming the file and the field.
    """
    import yaml

    from .yamlio import parse_yaml

    where = str(path)
    try:
        text = read_text(path)
        data = parse_yaml(text)
    except yaml.MarkedYAMLError as exc:
        # the mark is where the parser gave up: "while parsing a flow mapping" alone says not where
        mark = exc.problem_mark
        at = f"line {mark.line + 1} column {mark.column + 1}: " if mark is not None else ""
        raise ConfigError(f"--prices {where}: {at}not JSON/YAML: {exc.problem or exc.context}") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"--prices {where}: cannot read: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise ConfigError(f"--prices {where}: expected a mapping with 'models' (model spec -> prices)")
    unknown = sorted(set(data) - {"currency", "models"})
    if unknown:
        raise ConfigError(f"--prices {where}: unknown key {unknown[0]!r} (allowed: currency, models)")
    currency = data.get("currency", "USD")
    if not isinstance(currency, str) or not currency.strip():
        raise ConfigError(f"--prices {where}: currency: expected a non-empty string")
    models: dict[str, dict[str, float]] = {}
    for spec, row in data["models"].items():
        if not isinstance(row, dict):
            raise ConfigError(f"--prices {where}: models.{spec}: expected a mapping of {', '.join(_PRICE_KEYS)}")
        prices: dict[str, float] = {}
        for key, value in row.items():
            if key not in _PRICE_KEYS:
                raise ConfigError(f"--prices {where}: models.{spec}.{key}: unknown price "
                                  f"(allowed: {', '.join(_PRICE_KEYS)})")
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
                    or value < 0:
                raise ConfigError(f"--prices {where}: models.{spec}.{key}: expected a finite number >= 0, "
                                  f"got {value!r}")
            prices[key] = float(value)
        models[str(spec)] = prices
    return Prices(currency.strip(), models)


def _solved(episode: Episode, flag: str | None) -> bool:
    value = episode.metrics.get(flag) if flag else None
    return isinstance(value, int | float) and value == value and value >= 0.5


def cost_summary(episodes: Sequence[Episode], *, solved_metric: str | None, model: str | None = None,
                 prices: Prices | None = None) -> dict[str, Any]:
    """Tokens in/out, requests and wall seconds per episode and per solved task.

    Every episode counts, scored or not: an unscored episode still spent tokens and time.
    ``solved_metric`` is the suite's pass flag (its first headline metric when that is 0/1);
    per-solved figures are None when nothing was solved or no flag is known.
    """
    n = len(episodes)
    totals = {"input_tokens": 0.0, "output_tokens": 0.0, "requests": 0.0, "wall_s": 0.0}
    for ep in episodes:
        for key in ("input_tokens", "output_tokens", "requests"):
            totals[key] += float(ep.usage.get(key, 0) or 0)
        totals["wall_s"] += float(ep.duration_s or 0.0)
    price = prices.for_model(model) if prices else None
    if price is not None:
        totals["money"] = (totals["input_tokens"] * price.get("input_per_million", 0.0) / 1e6
                           + totals["output_tokens"] * price.get("output_per_million", 0.0) / 1e6
                           + totals["requests"] * price.get("per_request", 0.0))
    solved_tasks = {ep.task_id for ep in episodes if is_scored(ep) and _solved(ep, solved_metric)}
    out: dict[str, Any] = {"episodes": n, "solved_metric": solved_metric, "solved_tasks": len(solved_tasks),
                           "total": totals,
                           "per_episode": {k: (v / n if n else None) for k, v in totals.items()},
                           "per_solved_task": {k: (v / len(solved_tasks) if solved_tasks else None)
                                               for k, v in totals.items()}}
    if prices is not None:
        out["currency"] = prices.currency
        out["priced"] = price is not None
    return out


def solved_flag(headline: Sequence[str], episodes: Sequence[Episode],
                units: Mapping[str, str] | None = None) -> str | None:
    """The first headline metric if it is a 0/1 flag, else None: as the suite's ``units`` declare
    it when they name it (a 0-100 share whose values all happen to be 0 is no flag), else when
    its values in these episodes are all 0 or 1."""
    if not headline:
        return None
    key = headline[0]
    if units and key in units:
        return key if units[key] == "0/1" else None
    values = [ep.metrics[key] for ep in episodes if key in ep.metrics]
    ok = bool(values) and all(isinstance(v, int | float) and v in (0, 1) for v in values)
    return key if ok else None
