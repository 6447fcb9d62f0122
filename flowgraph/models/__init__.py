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
from flowgraph.models.scripted import ScriptedChatModel, ScriptedReply, ScriptedRequest

if _typing.TYPE_CHECKING:
    from flowgraph.models._http import DEFAULT_LIMITS, DEFAULT_TIMEOUT, HttpChatModel
    from flowgraph.models._init import init_chat_model
    from flowgraph.models.anthropic import AnthropicChatModel
    from flowgraph.models.ollama import OllamaChatModel
    from flowgraph.models.openai import OpenAIChatModel

_LAZY = {
    "DEFAULT_LIMITS": "flowgraph.models._http",
    "DEFAULT_TIMEOUT": "flowgraph.models._http",
    "HttpChatModel": "flowgraph.models._http",
    "init_chat_model": "flowgraph.models._init",
    "AnthropicChatModel": "flowgraph.models.anthropic",
    "OllamaChatModel": "flowgraph.models.ollama",
    "OpenAIChatModel": "flowgraph.models.openai",
}
"""Names whose modules import httpx: loaded on first use, so `import flowgraph` (and a
graph that only uses ScriptedChatModel) does not pay for httpx."""


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
