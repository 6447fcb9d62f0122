"""`init_chat_model("provider:model")`: a chat model from a string and the environment.

The string names the provider and the model (``"openai:gpt-4o-mini"``,
``"ollama:qwen3:8b"``, ``"anthropic:claude-sonnet-4-5"``); without one,
``FLOWGRAPH_MODEL`` supplies it. The base URL comes from `base_url=`, else
``FLOWGRAPH_BASE_URL``, else the provider's own variable or default; the
API key from `api_key=`, else ``FLOWGRAPH_API_KEY``, else the provider's
usual variable (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``,
``DEEPSEEK_API_KEY``, ``DASHSCOPE_API_KEY``). A configuration can thus
switch a program between a cloud model and a local server without code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from flowgraph.models._http import HttpChatModel
from flowgraph.models.anthropic import AnthropicChatModel
from flowgraph.models.ollama import OllamaChatModel
from flowgraph.models.openai import OpenAIChatModel

__all__ = ["PROVIDERS", "init_chat_model"]


@dataclass(frozen=True, slots=True)
class _Provider:
    cls: type[HttpChatModel]
    base_url: str | None = None
    """None: the class's own default (which reads the provider's base URL variable)."""
    key_variable: str | None = None


PROVIDERS: dict[str, _Provider] = {
    "openai": _Provider(OpenAIChatModel, None, "OPENAI_API_KEY"),
    "anthropic": _Provider(AnthropicChatModel, None, "ANTHROPIC_API_KEY"),
    "ollama": _Provider(OllamaChatModel),
    "deepseek": _Provider(OpenAIChatModel, "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    "dashscope": _Provider(
        OpenAIChatModel, "https://dashscope.aliyuncs.com/compatible-mode/v1", "DASHSCOPE_API_KEY"
    ),
    "vllm": _Provider(OpenAIChatModel, "http://localhost:8000/v1"),
    "llamacpp": _Provider(OpenAIChatModel, "http://localhost:8080/v1"),
    "lmstudio": _Provider(OpenAIChatModel, "http://localhost:1234/v1"),
}
"""Provider name -> adapter, default base URL and API key variable."""

_ALIASES = {"qwen": "dashscope", "llama.cpp": "llamacpp", "llama-cpp": "llamacpp"}


def init_chat_model(spec: str | None = None, **kwargs: Any) -> HttpChatModel:
    """A chat model for ``"provider:model"`` (default: ``FLOWGRAPH_MODEL``).

    Keyword arguments go to the adapter (`options=`, `timeout=`, ...).
    Without a provider, ``gpt-*``/``o1``-``o4`` models are OpenAI's and
    ``claude-*`` Anthropic's; anything else must name its provider.
    """
    spec = spec or os.environ.get("FLOWGRAPH_MODEL")
    if not spec:
        raise ValueError(
            "No model given: pass init_chat_model('provider:model') or set FLOWGRAPH_MODEL, "
            f"e.g. 'openai:gpt-4o-mini'; providers: {', '.join(sorted(PROVIDERS))}"
        )
    name, model = _split(spec)
    provider = PROVIDERS[name]
    if kwargs.get("base_url") is None:
        kwargs["base_url"] = os.environ.get("FLOWGRAPH_BASE_URL") or provider.base_url
    if kwargs.get("api_key") is None:
        key = os.environ.get("FLOWGRAPH_API_KEY")
        if not key and provider.key_variable:
            key = os.environ.get(provider.key_variable)
        kwargs["api_key"] = key or None
    model_object: HttpChatModel = provider.cls(model, **kwargs)
    return model_object


def _split(spec: str) -> tuple[str, str]:
    head, sep, rest = spec.partition(":")
    name = _ALIASES.get(head.lower(), head.lower())
    if sep and name in PROVIDERS and rest:
        return name, rest
    if spec.startswith(("gpt-", "o1", "o3", "o4", "chatgpt-")):
        return "openai", spec
    if spec.startswith("claude"):
        return "anthropic", spec
    raise ValueError(
        f"Cannot tell the provider of {spec!r}; write 'provider:model' with one of "
        f"{', '.join(sorted(PROVIDERS))} (e.g. 'ollama:qwen3:8b')"
    )
