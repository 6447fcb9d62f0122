"""What every chat model shares: the protocol, options, tools, listeners and handlers.

Nothing here does I/O. `ChatOptions` layers merge so the most specific
non-None field wins (per call > node > model default); tools are anything
with `.name`, `.description` and `.json_schema` (or an OpenAI-style dict, or
a pydantic model class), normalised once to `ToolSpec`; listeners observe
calls (`on_request`, `on_response`, `on_error`) and a `StreamingHandler`
receives one call's partial output as it arrives.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic import BaseModel, ValidationError

from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    MessageLike,
    ToolCallChunk,
    Usage,
)
from flowgraph.tools import Tool

__all__ = [
    "ChatModel",
    "ChatModelListener",
    "ChatOptions",
    "ModelErrorEvent",
    "ModelRequestEvent",
    "ModelResponseEvent",
    "ResponseFormat",
    "StreamingHandler",
    "ToolChoice",
    "ToolLike",
    "ToolSpec",
    "tool_specs",
]

logger = logging.getLogger("flowgraph.models")

ToolChoice: TypeAlias = Literal["auto", "none", "required"] | str
""""auto", "none", "required" (some tool must be called), or one tool's name."""

ResponseFormat: TypeAlias = type[BaseModel] | Mapping[str, Any] | Literal["json"]
"""A pydantic model class (its JSON schema is sent and the reply parsed into it), a
JSON schema dict, a provider's own response_format dict, or "json" (any JSON object)."""

Messages: TypeAlias = str | Sequence[MessageLike]
"""What a model call takes: a list of messages (or dicts, tuples), or one string."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ChatOptions:
    """Generation options; None means "not set here", so a less specific layer decides.

    Layers merge with `ChatOptions.merge(model_default, node, call)`: for each
    field the most specific non-None value wins; `extra` dicts merge key by
    key (the more specific layer's keys win). `extra` goes into the request
    body as is (for Ollama: into `options`, except its top-level keys).
    """

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    stop: Sequence[str] | None = None
    tool_choice: ToolChoice | None = None
    response_format: ResponseFormat | None = None
    seed: int | None = None
    extra: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.stop, str):
            object.__setattr__(self, "stop", (self.stop,))
        elif self.stop is not None:
            object.__setattr__(self, "stop", tuple(self.stop))

    @staticmethod
    def merge(*layers: ChatOptions | None) -> ChatOptions:
        """The layers combined, least specific first: `merge(model, node, call)`."""
        result = ChatOptions()
        for layer in layers:
            if layer is None:
                continue
            changes: dict[str, Any] = {}
            for name in _OPTION_FIELDS:
                value = getattr(layer, name)
                if value is not None:
                    changes[name] = value
            if layer.extra is not None:
                changes["extra"] = {**(result.extra or {}), **layer.extra}
            result = replace(result, **changes)
        return result


_OPTION_FIELDS = (
    "model",
    "temperature",
    "max_tokens",
    "top_p",
    "stop",
    "tool_choice",
    "response_format",
    "seed",
)


# ------------------------------------------------------------------ tools


@runtime_checkable
class ToolLike(Protocol):
    """Anything a model can be told about: a flowgraph `Tool` or your own object."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def json_schema(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as providers see it: name, description and JSON schema of the arguments."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


def tool_specs(tools: Sequence[object]) -> tuple[ToolSpec, ...]:
    """Normalise tools: `ToolLike` objects, `ToolSpec`s, functions, pydantic classes, or dicts.

    A dict may be OpenAI's `{"type": "function", "function": {...}}` or just
    `{"name", "description", "parameters"}`.
    """
    return tuple(_tool_spec(tool) for tool in tools)


def _tool_spec(tool: object) -> ToolSpec:
    if isinstance(tool, ToolSpec):
        return tool
    if isinstance(tool, Tool):  # the usual case, before the slower protocol check below
        return ToolSpec(tool.name, tool.description or "", tool.json_schema)
    if isinstance(tool, type) and issubclass(tool, BaseModel):
        return ToolSpec(tool.__name__, (tool.__doc__ or "").strip(), tool.model_json_schema())
    if isinstance(tool, Mapping):
        function = tool.get("function", tool)
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return ToolSpec(
                function["name"],
                function.get("description") or "",
                function.get("parameters") or {"type": "object", "properties": {}},
            )
    elif isinstance(tool, ToolLike):
        return ToolSpec(tool.name, tool.description or "", tool.json_schema)
    elif callable(tool) and not isinstance(tool, type):
        return _function_spec(tool)
    raise TypeError(
        f"Cannot describe {tool!r} to a model; pass a tool (with .name, .description and "
        ".json_schema), a function with type hints and a docstring, a pydantic model class, "
        "or a dict with 'name' and 'parameters'"
    )


def _function_spec(fn: Callable[..., Any]) -> ToolSpec:
    """A plain function described as `@tool` would describe it (name, docstring, hints)."""
    try:
        return _cached_function_spec(fn)
    except TypeError:  # an unhashable callable object: described afresh
        return _describe_function(fn)


def _describe_function(fn: Callable[..., Any]) -> ToolSpec:
    made = Tool(fn)
    return ToolSpec(made.name, made.description, made.json_schema)


_cached_function_spec = lru_cache(maxsize=256)(_describe_function)
"""A model call may pass the same functions every time: their schema is built once."""


# --------------------------------------------------------- structured output


def response_schema(response_format: ResponseFormat) -> tuple[str, dict[str, Any]] | None:
    """(name, JSON schema) a response must follow; None for "json" or a provider's own dict."""
    if isinstance(response_format, type) and issubclass(response_format, BaseModel):
        return response_format.__name__, response_format.model_json_schema()
    if isinstance(response_format, Mapping):
        kind = response_format.get("type")
        if kind == "json_schema" and isinstance(response_format.get("json_schema"), Mapping):
            wrapped = response_format["json_schema"]
            return str(wrapped.get("name", "response")), dict(wrapped.get("schema", {}))
        if kind in ("json_object", "text"):
            return None
        return str(response_format.get("title", "response")), dict(response_format)
    return None


def parse_structured(text: str, response_format: ResponseFormat) -> dict[str, Any]:
    """What to put in the reply's `metadata`: {"parsed": value} or {"parsing_error": why}.

    A pydantic class gives a validated instance; a schema or "json" gives
    the decoded JSON value.
    """
    if isinstance(response_format, Mapping) and response_format.get("type") == "text":
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return {"parsing_error": f"the reply is not JSON: {exc}"}
    if isinstance(response_format, type) and issubclass(response_format, BaseModel):
        try:
            return {"parsed": response_format.model_validate(value)}
        except ValidationError as exc:
            return {"parsing_error": f"the reply does not fit {response_format.__name__}: {exc}"}
    return {"parsed": value}


# --------------------------------------------------------------- listeners


@dataclass(slots=True)
class ModelRequestEvent:
    """A call about to be made; `attributes` is yours, shared with the later events."""

    provider: str
    model: str
    messages: Sequence[BaseMessage]
    tools: tuple[ToolSpec, ...]
    options: ChatOptions
    streaming: bool
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ModelResponseEvent:
    """A call that succeeded: the reply, the wall time in seconds, and attempts made."""

    request: ModelRequestEvent
    message: AIMessage
    latency: float
    attempts: int

    @property
    def usage(self) -> Usage | None:
        """The reply's token usage, when the provider reported it."""
        return self.message.usage


@dataclass(slots=True)
class ModelErrorEvent:
    """A call that failed after `attempts` tries."""

    request: ModelRequestEvent
    error: Exception
    latency: float
    attempts: int


class ChatModelListener:
    """Observes model calls (logging, metrics, tracing); override what you need.

    Listeners must not break calls: an exception from one is logged and ignored.
    """

    def on_request(self, event: ModelRequestEvent) -> None:
        """Before the first attempt of a call."""

    def on_response(self, event: ModelResponseEvent) -> None:
        """After a call succeeded (once, however many attempts it took)."""

    def on_error(self, event: ModelErrorEvent) -> None:
        """After a call failed for good."""


class StreamingHandler:
    """Receives one call's output as it streams; override what you need.

    Exceptions raised here are not caught: they stop the call and reach the caller.
    """

    def on_partial_text(self, text: str) -> None:
        """A fragment of the reply's text."""

    def on_partial_reasoning(self, text: str) -> None:
        """A fragment of the model's reasoning."""

    def on_partial_tool_call(self, call: ToolCallChunk) -> None:
        """A fragment of a tool call (`index` says which; `args` is a JSON fragment)."""

    def on_complete_response(self, message: AIMessage) -> None:
        """The whole reply, as `invoke` returns it."""

    def on_error(self, error: Exception) -> None:
        """The call failed; the same error is then raised to the caller."""


# ---------------------------------------------------------------- protocol


@runtime_checkable
class ChatModel(Protocol):
    """What a graph needs from a chat model; every adapter in this package is one.

    `config` is taken where LangChain's models take it (`llm.invoke(messages,
    config)` in a node) and not needed: the run's streaming and tracing reach
    the call without it.
    """

    def invoke(
        self,
        messages: Messages,
        config: Mapping[str, Any] | None = None,
        *,
        tools: Sequence[object] = (),
        options: ChatOptions | None = None,
    ) -> AIMessage: ...

    def stream(
        self,
        messages: Messages,
        config: Mapping[str, Any] | None = None,
        *,
        tools: Sequence[object] = (),
        options: ChatOptions | None = None,
    ) -> Iterator[AIMessageChunk]: ...

    async def ainvoke(
        self,
        messages: Messages,
        config: Mapping[str, Any] | None = None,
        *,
        tools: Sequence[object] = (),
        options: ChatOptions | None = None,
    ) -> AIMessage: ...

    def astream(
        self,
        messages: Messages,
        config: Mapping[str, Any] | None = None,
        *,
        tools: Sequence[object] = (),
        options: ChatOptions | None = None,
    ) -> AsyncIterator[AIMessageChunk]: ...
