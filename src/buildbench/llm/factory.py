"""Build a model client from a spec string such as ``openai:gpt-4o``.

Spec: ``provider:model[@base_url]``, or ``scripted`` / ``scripted:name``, or
``python:path/to/file.py:fn`` / ``python:package.module:fn`` for a model that is a Python
function in the harness process (see :mod:`.python_model`).

======== ======================================== ====================== ==============
provider default base URL                         key variable           key required
======== ======================================== ====================== ==============
openai   api.openai.com                           ``OPENAI_API_KEY``     yes
openrouter https://openrouter.ai/api/v1           ``OPENROUTER_API_KEY`` yes
vllm     http://127.0.0.1:8000/v1                 ``VLLM_API_KEY``       no
sglang   http://127.0.0.1:30000/v1                ``SGLANG_API_KEY``     no
ollama   http://127.0.0.1:11434/v1                ``OLLAMA_API_KEY``     no
anthropic api.anthropic.com                       ``ANTHROPIC_API_KEY``  yes
======== ======================================== ====================== ==============

The base URL is, first found wins: the ``base_url=`` override, the ``@url`` in the spec,
the variable ``<PROVIDER>_BASE_URL`` (``VLLM_BASE_URL``, ``OPENAI_BASE_URL``...), the
default above. Providers without a required key send a placeholder when none is set.

Example:
    >>> make_model("vllm:Qwen/Qwen2.5-VL-7B-Instruct@http://gpu-box:8000/v1").base_url
    'http://gpu-box:8000/v1'
"""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass
from typing import Any, Literal

from .client import ChatModel, LLMConfigError
from .scripted import ScriptedChat


@dataclass(frozen=True)
class Preset:
    """Defaults for one provider name.

    Attributes:
        api: Which wire protocol its server speaks.
        base_url: Default endpoint root; None for the SDK's own default.
        key_env: Environment variable holding the key.
        require_key: Whether a missing key is an error.
    """

    api: Literal["openai", "anthropic"]
    base_url: str | None
    key_env: str
    require_key: bool


PRESETS: dict[str, Preset] = {
    "openai": Preset("openai", None, "OPENAI_API_KEY", True),
    "openrouter": Preset("openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", True),
    "vllm": Preset("openai", "http://127.0.0.1:8000/v1", "VLLM_API_KEY", False),
    "sglang": Preset("openai", "http://127.0.0.1:30000/v1", "SGLANG_API_KEY", False),
    "ollama": Preset("openai", "http://127.0.0.1:11434/v1", "OLLAMA_API_KEY", False),
    "anthropic": Preset("anthropic", None, "ANTHROPIC_API_KEY", True),
}


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec string."""

    provider: str
    model: str
    base_url: str | None


def parse_spec(spec: str) -> ModelSpec:
    """Split ``provider:model[@base_url]``; the ``@`` is only taken before ``http(s)://``."""
    text = spec.strip()
    if text == "scripted":
        return ModelSpec("scripted", "scripted", None)
    provider, sep, rest = text.partition(":")
    if not sep or not provider or not rest:
        raise LLMConfigError(f"model spec {spec!r}: expected 'provider:model', e.g. 'openai:gpt-4o'")
    model, at, url = rest.rpartition("@")
    if at and "://" in url and model:  # a URL of another scheme is a mistake, not part of a model name
        return ModelSpec(provider.lower(), model, _checked_url(url, f"model spec {spec!r}"))
    return ModelSpec(provider.lower(), rest, None)


def _checked_url(url: str, where: str) -> str:
    """``url`` when it is an http(s) URL with a host (and a valid port, if any).

    Raises:
        LLMConfigError: It is not (one line naming ``where``; it failed every episode's first call).
    """
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - reading it checks it
    except ValueError as exc:
        raise LLMConfigError(f"{where}: base URL {url!r} is not a URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LLMConfigError(f"{where}: base URL {url!r} must start with http:// or https:// and name a host")
    return url


def make_model(spec: str, **overrides: Any) -> ChatModel:
    """A client for ``spec`` (see the module docstring); ``overrides`` go to its constructor.

    Raises:
        LLMConfigError: Unknown provider, malformed spec, missing required key, or an
            override the client does not take.
    """
    parsed = parse_spec(spec)
    if parsed.provider == "scripted":
        try:
            return ScriptedChat(model=parsed.model, **overrides)
        except TypeError as exc:
            raise LLMConfigError(f"make_model({spec!r}): {exc}") from exc
    if parsed.provider == "python":
        from .python_model import PythonChat

        try:
            return PythonChat(parsed.model, **overrides)
        except TypeError as exc:
            raise LLMConfigError(f"make_model({spec!r}): {exc}") from exc
    preset = PRESETS.get(parsed.provider)
    if preset is None:
        known = ", ".join(sorted([*PRESETS, "python", "scripted"]))
        raise LLMConfigError(f"model spec {spec!r}: unknown provider {parsed.provider!r}; known: {known}")
    env_name = f"{parsed.provider.upper()}_BASE_URL"
    env_url = os.environ.get(env_name) or None
    base_url = overrides.pop("base_url", None) or parsed.base_url or env_url or preset.base_url
    if base_url is not None:
        _checked_url(base_url, f"model {spec!r}" + (f" (from {env_name})" if base_url == env_url else ""))
    kwargs: dict[str, Any] = {
        "base_url": base_url,
        "api_key_env": preset.key_env,
        "require_key": preset.require_key,
        **overrides,
    }
    # Imported here: each SDK takes seconds to import and most runs use only one.
    try:
        if preset.api == "anthropic":
            from .anthropic_client import AnthropicChat

            return AnthropicChat(parsed.model, **kwargs)
        from .openai_client import OpenAIChat

        return OpenAIChat(parsed.model, provider=parsed.provider, **kwargs)
    except TypeError as exc:
        raise LLMConfigError(f"make_model({spec!r}): {exc}") from exc
