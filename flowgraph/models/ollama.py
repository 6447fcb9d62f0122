"""`OllamaChatModel`: Ollama's native ``/api/chat`` (NDJSON streaming).

Use it for what only the native API offers -- `think`, `keep_alive`,
`num_ctx` and the other runtime options; Ollama's OpenAI-compatible
``/v1`` works with `OpenAIChatModel` too.

The wire format, as sent and read here:

- messages: ``{"role", "content", "images": [base64...], "thinking",
  "tool_calls": [{"function": {"name", "arguments": {...}}}], "tool_name"}``
  -- images travel inline (an image given by http(s) URL cannot be sent);
  a tool result names its tool, found from the call it answers; a call
  whose arguments did not parse goes out with ``arguments: {}`` (the wire
  takes only an object), its raw text quoted in the result that answers it
  (see `flowgraph.models._history`);
- options: temperature, top_p, seed, stop and `max_tokens` (as
  ``num_predict``) go in ``options``, as does every `ChatOptions.extra` key
  except the top-level ones (``think``, ``keep_alive``, ``format``, ...);
  ``num_ctx=8192`` is thus ``extra={"num_ctx": 8192}``;
- `response_format`: "json" becomes ``"format": "json"``, a pydantic class
  or a schema becomes ``"format": {schema}``;
- `tool_choice`: Ollama has none; "none" leaves the tools out, anything
  else sends them and lets the model choose;
- the reply: ``message.content``, ``message.thinking`` (a `ReasoningPart`),
  ``message.tool_calls`` with arguments as objects (ids made up when the
  server sends none), usage from ``prompt_eval_count``/``eval_count``,
  ``done_reason`` (``finish_reason`` is "tool_calls" when the model called
  tools, as in OpenAI's format). A stream ends with a line whose ``done`` is
  true; a stream without one raises.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar, Unpack

import httpx

from flowgraph.errors import InvalidMessageError, MalformedResponseError
from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ImagePart,
    ReasoningPart,
    TextPart,
    ToolCallChunk,
    ToolCallPart,
    ToolMessage,
    Usage,
)
from flowgraph.models._base import ResponseFormat, response_schema
from flowgraph.models._call import Call
from flowgraph.models._framing import NDJSONDecoder
from flowgraph.models._history import json_object, request_history
from flowgraph.models._http import HttpChatModel, HttpOptions, error_for_status, stream_cut

__all__ = ["OllamaChatModel", "OllamaStreamParser", "build_ollama_body", "ollama_messages"]

OLLAMA_BASE_URL = "http://localhost:11434"

TOP_LEVEL_KEYS = frozenset({"think", "keep_alive", "format", "tools", "template", "raw"})
"""`ChatOptions.extra` keys that belong at the top of the body; others go in `options`."""


class OllamaChatModel(HttpChatModel):
    """A chat model over Ollama's native API.

    `base_url` defaults to ``OLLAMA_HOST`` or ``http://localhost:11434``;
    `think` turns reasoning on or off (True/False, or "low"/"medium"/"high"
    for models that grade it); `keep_alive` says how long the server keeps
    the model loaded ("5m", 0, -1).
    """

    provider: ClassVar[str] = "ollama"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        think: bool | str | None = None,
        keep_alive: str | int | None = None,
        **kwargs: Unpack[HttpOptions],
    ) -> None:
        host = base_url or os.environ.get("OLLAMA_HOST") or OLLAMA_BASE_URL
        if "://" not in host:
            host = f"http://{host}"
        super().__init__(model, base_url=host, api_key=api_key, **kwargs)
        self.think = think
        self.keep_alive = keep_alive

    def _request(self, call: Call) -> httpx.Request:
        body = build_ollama_body(call, think=self.think, keep_alive=self.keep_alive)
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        return self._json_request("/api/chat", body, headers)

    def _parse_response(self, data: Any, call: Call) -> AIMessageChunk:
        parser = OllamaStreamParser(self.provider)
        chunk = parser.chunk(data)
        if not parser.done:
            raise MalformedResponseError(
                f"{self.provider} sent a reply that is not done: {str(data)[:300]}"
            )
        return chunk

    def _stream_parser(self, call: Call) -> OllamaStreamParser:
        return OllamaStreamParser(self.provider)


# ----------------------------------------------------------------- requests


def build_ollama_body(
    call: Call, *, think: bool | str | None = None, keep_alive: str | int | None = None
) -> dict[str, Any]:
    """The ``/api/chat`` request body for `call` (a pure function)."""
    options = call.options
    body: dict[str, Any] = {
        "model": call.model,
        "messages": ollama_messages(call.messages),
        "stream": call.stream,
    }
    if call.tools and options.tool_choice != "none":
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": dict(tool.parameters),
                },
            }
            for tool in call.tools
        ]
    if options.response_format is not None:
        body["format"] = _format(options.response_format)
    if think is not None:
        body["think"] = think
    if keep_alive is not None:
        body["keep_alive"] = keep_alive
    runtime: dict[str, Any] = {}
    for key, value in (
        ("temperature", options.temperature),
        ("top_p", options.top_p),
        ("seed", options.seed),
        ("num_predict", options.max_tokens),
    ):
        if value is not None:
            runtime[key] = value
    if options.stop is not None:
        runtime["stop"] = list(options.stop)
    for key, value in (options.extra or {}).items():
        if key in TOP_LEVEL_KEYS:
            body[key] = value
        else:
            runtime[key] = value
    if runtime:
        body["options"] = runtime
    return body


def _format(response_format: ResponseFormat) -> Any:
    if response_format == "json" or (
        isinstance(response_format, Mapping) and response_format.get("type") == "json_object"
    ):
        return "json"
    schema = response_schema(response_format)
    return schema[1] if schema is not None else "json"


def ollama_messages(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    """Messages in ``/api/chat``'s shape; tool results name the tool their call asked for.

    Invalid calls (with an id and a name: those a tool result can answer) go
    out after the valid ones, with their arguments as an object: parsed when
    they are one, else ``{}`` and the raw text quoted in the answering
    result (`request_history`), so the model sees the call its result answers.
    """
    tool_names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for message in request_history(messages):
        role = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}[
            message.type
        ]
        entry: dict[str, Any] = {"role": role, "content": message.text}
        images = [_image(part, message) for part in message.media]
        if images:
            entry["images"] = images
        if isinstance(message, AIMessage):
            if message.reasoning:
                entry["thinking"] = message.reasoning
            calls = [
                (part.id, part.name, part.args)
                for part in message.content_blocks
                if isinstance(part, ToolCallPart)
            ]
            calls.extend(
                (call.id, call.name, json_object(call.args) or {})
                for call in message.invalid_tool_calls
                if call.id and call.name
            )
            if calls:
                entry["tool_calls"] = [
                    {"function": {"name": name, "arguments": args}} for _, name, args in calls
                ]
                tool_names.update((call_id, name) for call_id, name, _ in calls)
        elif isinstance(message, ToolMessage):
            name = tool_names.get(message.tool_call_id) or message.name
            if name:
                entry["tool_name"] = name
        out.append(entry)
    return out


def _image(part: object, message: BaseMessage) -> str:
    if isinstance(part, ImagePart):
        if part.data is not None:
            return part.data
        if part.url is not None and part.url.startswith("data:") and ";base64," in part.url:
            return part.url.partition(";base64,")[2]
        raise InvalidMessageError(
            f"Ollama takes images inline, not by link ({part.url!r}); pass ImagePart(data=...)",
            message_id=message.id,
        )
    raise InvalidMessageError(
        f"Ollama's chat API takes text and images only, not {type(part).__name__}",
        message_id=message.id,
    )


# ---------------------------------------------------------------- responses


class OllamaStreamParser:
    """``/api/chat`` replies: NDJSON lines, the last with ``"done": true``.

    The same parser reads a whole (non-streamed) reply -- one line -- so
    both paths build the same message.
    """

    def __init__(self, provider: str) -> None:
        self._where = provider
        self._lines = NDJSONDecoder(provider)
        self.done = False
        self._calls = 0
        self._prefix = uuid.uuid4().hex[:12]

    def feed(self, data: bytes) -> list[AIMessageChunk]:
        return [self.chunk(line) for line in self._lines.feed(data) if not self.done]

    def close(self) -> list[AIMessageChunk]:
        chunks = [self.chunk(line) for line in self._lines.close() if not self.done]
        if self._lines.truncated or not self.done:
            raise stream_cut(self._where, 'a line with "done": true')
        return chunks

    def chunk(self, data: Any) -> AIMessageChunk:
        if not isinstance(data, Mapping):
            raise MalformedResponseError(f"{self._where} sent {data!r} instead of an object")
        if "error" in data:
            error = data["error"]
            raise error_for_status(
                self._where, 500, {}, json.dumps(error).encode(), str(error) if error else None
            )
        message = data.get("message") or {}
        if not isinstance(message, Mapping):
            raise MalformedResponseError(f"{self._where} sent a message {message!r}")
        parts: list[Any] = []
        thinking = message.get("thinking")
        if isinstance(thinking, str) and thinking:
            parts.append(ReasoningPart(text=thinking))
        content = message.get("content")
        if isinstance(content, str) and content:
            parts.append(TextPart(text=content))
        for call in message.get("tool_calls") or ():
            parts.append(self._tool_call(call))
        usage = None
        metadata: dict[str, Any] = {}
        if data.get("done"):
            self.done = True
            prompt = data.get("prompt_eval_count") or 0
            output = data.get("eval_count") or 0
            usage = Usage(input_tokens=prompt, output_tokens=output)
            reason = data.get("done_reason") or "stop"
            metadata["finish_reason"] = "tool_calls" if self._calls else reason
            metadata["done_reason"] = reason
            if data.get("model"):
                metadata["model_name"] = data["model"]
        return AIMessageChunk(content=parts, usage=usage, response_metadata=metadata)

    def _tool_call(self, call: object) -> ToolCallChunk:
        if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
            raise MalformedResponseError(f"{self._where} sent a tool call {call!r}")
        function = call["function"]
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            args = arguments
        else:
            args = json.dumps(arguments or {}, ensure_ascii=False, separators=(",", ":"))
        index = self._calls
        self._calls += 1
        call_id = call.get("id") or f"call_{self._prefix}_{index}"
        return ToolCallChunk(index=index, id=call_id, name=function.get("name"), args=args)
