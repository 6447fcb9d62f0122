"""Chat models: the `ChatModel` protocol, options, and adapters over httpx.

`OpenAIChatModel` (Chat Completions: OpenAI, DeepSeek, DashScope, vLLM,
llama.cpp, Ollama /v1, LM Studio), `OllamaChatModel` (native /api/chat),
`AnthropicChatModel` (Messages API) and `ScriptedChatModel` (offline,
deterministic) share one call logic: `invoke`, `ainvoke`, `stream` and
`astream` run the same request building, retries and parsing, and inside a
graph they charge the run's Budget, record tokens and stream to
``stream(mode="messages")``.
"""

import typing as _typing

from flowgraph._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from flowgraph.models._base import (
        ChatModel,
        ChatModelListener,
        ChatOptions,
        ModelErrorEvent,
        ModelRequestEvent,
        ModelResponseEvent,
        ResponseFormat,
        StreamingHandler,
        ToolChoice,
        ToolLike,
        ToolSpec,
        tool_specs,
    )
    from flowgraph.models._bound import BoundChatModel
    from flowgraph.models._call import BaseChatModel
    from flowgraph.models._http import DEFAULT_LIMITS, DEFAULT_TIMEOUT, HttpChatModel
    from flowgraph.models._init import init_chat_model
    from flowgraph.models.anthropic import AnthropicChatModel
    from flowgraph.models.ollama import OllamaChatModel
    from flowgraph.models.openai import OpenAIChatModel
    from flowgraph.models.scripted import ScriptedChatModel, ScriptedReply, ScriptedRequest

_LAZY = {
    "ChatModel": "flowgraph.models._base",
    "ChatModelListener": "flowgraph.models._base",
    "ChatOptions": "flowgraph.models._base",
    "ModelErrorEvent": "flowgraph.models._base",
    "ModelRequestEvent": "flowgraph.models._base",
    "ModelResponseEvent": "flowgraph.models._base",
    "ResponseFormat": "flowgraph.models._base",
    "StreamingHandler": "flowgraph.models._base",
    "ToolChoice": "flowgraph.models._base",
    "ToolLike": "flowgraph.models._base",
    "ToolSpec": "flowgraph.models._base",
    "tool_specs": "flowgraph.models._base",
    "BoundChatModel": "flowgraph.models._bound",
    "BaseChatModel": "flowgraph.models._call",
    "DEFAULT_LIMITS": "flowgraph.models._http",
    "DEFAULT_TIMEOUT": "flowgraph.models._http",
    "HttpChatModel": "flowgraph.models._http",
    "init_chat_model": "flowgraph.models._init",
    "AnthropicChatModel": "flowgraph.models.anthropic",
    "OllamaChatModel": "flowgraph.models.ollama",
    "OpenAIChatModel": "flowgraph.models.openai",
    "ScriptedChatModel": "flowgraph.models.scripted",
    "ScriptedReply": "flowgraph.models.scripted",
    "ScriptedRequest": "flowgraph.models.scripted",
}
"""Every exported name and the module that defines it, imported on first use."""

__getattr__, __dir__ = _lazy_exports("flowgraph.models", _LAZY, globals())

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_TIMEOUT",
    "AnthropicChatModel",
    "BaseChatModel",
    "BoundChatModel",
    "ChatModel",
    "ChatModelListener",
    "ChatOptions",
    "HttpChatModel",
    "ModelErrorEvent",
    "ModelRequestEvent",
    "ModelResponseEvent",
    "OllamaChatModel",
    "OpenAIChatModel",
    "ResponseFormat",
    "ScriptedChatModel",
    "ScriptedReply",
    "ScriptedRequest",
    "StreamingHandler",
    "ToolChoice",
    "ToolLike",
    "ToolSpec",
    "init_chat_model",
    "tool_specs",
]
