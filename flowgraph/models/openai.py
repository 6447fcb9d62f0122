"""`OpenAIChatModel`: OpenAI's Chat Completions API and every server that speaks it.

One adapter serves them all; only `base_url` (and the key) changes:

=====================  ==============================================================
OpenAI                 ``https://api.openai.com/v1`` (the default; ``OPENAI_API_KEY``)
DeepSeek               ``https://api.deepseek.com/v1`` (``DEEPSEEK_API_KEY``)
DashScope (Qwen)       ``https://dashscope.aliyuncs.com/compatible-mode/v1``
                       (international: ``https://dashscope-intl.aliyuncs.com/compatible-mode/v1``;
                       ``DASHSCOPE_API_KEY``)
vLLM                   ``http://localhost:8000/v1`` (``vllm serve MODEL``)
llama.cpp server       ``http://localhost:8080/v1`` (``llama-server -m MODEL.gguf``)
Ollama (compatible)    ``http://localhost:11434/v1`` (any api_key; or `OllamaChatModel`)
LM Studio              ``http://localhost:1234/v1``
=====================  ==============================================================

What is sent: the messages through `to_openai` (reasoning is left out
unless `send_reasoning=True`, which DeepSeek's and Qwen's thinking modes
want back during tool use, and OpenAI refuses; a tool call whose arguments
are not a JSON object goes out with ``"{}"`` and its raw text in the tool
result that answers it, because strict servers such as llama.cpp refuse the
whole request otherwise -- see `flowgraph.models._history`), tools in function format,
`tool_choice` ("auto", "none", "required", or a tool's name), `response_format`
(a pydantic class or a JSON schema becomes ``json_schema``; "json" becomes
``json_object``), temperature, top_p, stop, seed, the token limit (as
``max_completion_tokens`` for api.openai.com, ``max_tokens`` elsewhere), and
``stream_options.include_usage`` when streaming (turn off with
`stream_usage=False` for a server that refuses it). `ChatOptions.extra` is
merged into the body last. A named `tool_choice` goes out in OpenAI's object
form to api.openai.com; other servers get only that tool with "required",
because some (llama.cpp's) read the object form as "auto".

What is read: text, `reasoning_content` (or `reasoning`) as a
`ReasoningPart`, tool calls (arguments that do not parse become
`InvalidToolCall`s), `refusal` (in `response_metadata["refusal"]`), usage
with cached and reasoning tokens, and `finish_reason`, `model_name` and
`system_fingerprint` in `response_metadata`; the reply's id is the
completion's. Streaming reassembles text, reasoning and tool-call argument
deltas by index into exactly the message a non-streaming call returns
(both paths build the reply from chunks). Only the first choice is read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, Unpack
from urllib.parse import urlsplit

import httpx

from flowgraph.errors import MalformedResponseError
from flowgraph.messages import (
    AIMessageChunk,
    ReasoningPart,
    TextPart,
    ToolCallChunk,
    Usage,
    to_openai,
)
from flowgraph.models._base import ResponseFormat, response_schema
from flowgraph.models._call import Call
from flowgraph.models._framing import SSEDecoder, SSEEvent, decode_json
from flowgraph.models._history import request_history
from flowgraph.models._http import (
    HttpChatModel,
    HttpOptions,
    error_for_status,
    stream_cut,
)

__all__ = [
    "OpenAIChatModel",
    "OpenAIStreamParser",
    "build_openai_body",
    "openai_chunk",
    "openai_response_format",
    "openai_usage",
]

OPENAI_BASE_URL = "https://api.openai.com/v1"


class OpenAIChatModel(HttpChatModel):
    """A chat model over the Chat Completions API (OpenAI and compatible servers).

    `base_url` defaults to ``OPENAI_BASE_URL`` or OpenAI's own, and `api_key`
    to ``OPENAI_API_KEY`` -- only then, or for a base_url on api.openai.com:
    OpenAI's key is never sent to another server. A local server needs no key. See
    the module docstring for other providers' base URLs and `HttpChatModel`
    for timeouts, limits and retries.
    """

    provider: ClassVar[str] = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        send_reasoning: bool = False,
        stream_usage: bool = True,
        max_tokens_key: str | None = None,
        named_tool_choice: Literal["object", "required"] | None = None,
        **kwargs: Unpack[HttpOptions],
    ) -> None:
        own_server = base_url is None or urlsplit(base_url).hostname == "api.openai.com"
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
        if api_key is None and own_server:  # never send OpenAI's key to another server
            api_key = os.environ.get("OPENAI_API_KEY")
        super().__init__(model, base_url=base_url, api_key=api_key, **kwargs)
        self.send_reasoning = send_reasoning
        self.stream_usage = stream_usage
        is_openai = urlsplit(self.base_url).hostname == "api.openai.com"
        if max_tokens_key is None:
            max_tokens_key = "max_completion_tokens" if is_openai else "max_tokens"
        self.max_tokens_key = max_tokens_key
        self.named_tool_choice = named_tool_choice or ("object" if is_openai else "required")
        """How `tool_choice="<tool name>"` is sent: OpenAI's object form, or -- for servers
        that ignore it, as llama.cpp's does -- only that tool with tool_choice "required"."""

    def _request(self, call: Call) -> httpx.Request:
        body = build_openai_body(
            call,
            send_reasoning=self.send_reasoning,
            stream_usage=self.stream_usage,
            max_tokens_key=self.max_tokens_key,
            named_tool_choice=self.named_tool_choice,
        )
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        if call.stream:
            headers["accept"] = "text/event-stream"
        return self._json_request("/chat/completions", body, headers)

    def _parse_response(self, data: Any, call: Call) -> AIMessageChunk:
        _raise_embedded_error(data, self.provider)
        if not isinstance(data, Mapping) or not isinstance(data.get("choices"), list):
            raise MalformedResponseError(
                f"{self.provider} sent a completion without 'choices': {str(data)[:300]}"
            )
        if not data["choices"]:
            raise MalformedResponseError(f"{self.provider} sent a completion with no choices")
        chunk = openai_chunk(data, "message")
        assert chunk is not None  # a completion always carries its model name
        return chunk

    def _stream_parser(self, call: Call) -> OpenAIStreamParser:
        return OpenAIStreamParser(self.provider, expect_usage=self.stream_usage)


# ----------------------------------------------------------------- requests


def build_openai_body(
    call: Call,
    *,
    send_reasoning: bool = False,
    stream_usage: bool = True,
    max_tokens_key: str = "max_tokens",
    named_tool_choice: Literal["object", "required"] = "object",
) -> dict[str, Any]:
    """The Chat Completions request body for `call` (a pure function).

    Every tool call in it has arguments that parse as a JSON object
    (`request_history` says how and why); `call.messages` are not changed.
    """
    options = call.options
    body: dict[str, Any] = {
        "model": call.model,
        "messages": to_openai(request_history(call.messages), include_reasoning=send_reasoning),
    }
    tools = call.tools
    choice = options.tool_choice
    if choice not in (None, "auto", "none", "required") and named_tool_choice == "required":
        tools = tuple(tool for tool in tools if tool.name == choice) or tools
        choice = "required"
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    **({"description": tool.description} if tool.description else {}),
                    "parameters": dict(tool.parameters),
                },
            }
            for tool in tools
        ]
    if choice is not None:
        body["tool_choice"] = _tool_choice(choice)
    if options.response_format is not None:
        body["response_format"] = openai_response_format(options.response_format)
    _put(body, "temperature", options.temperature)
    _put(body, "top_p", options.top_p)
    _put(body, max_tokens_key, options.max_tokens)
    _put(body, "seed", options.seed)
    if options.stop is not None:
        body["stop"] = list(options.stop)
    if call.stream:
        body["stream"] = True
        if stream_usage:
            body["stream_options"] = {"include_usage": True}
    if options.extra:
        body.update(options.extra)
    return body


def _put(body: dict[str, Any], key: str, value: object) -> None:
    if value is not None:
        body[key] = value


def _tool_choice(choice: str) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def openai_response_format(response_format: ResponseFormat) -> dict[str, Any]:
    """`response_format` in Chat Completions' shape."""
    if response_format == "json":
        return {"type": "json_object"}
    if isinstance(response_format, Mapping) and response_format.get("type") in (
        "json_object",
        "json_schema",
        "text",
    ):
        return dict(response_format)
    schema = response_schema(response_format)
    if schema is None:  # pragma: no cover - every other shape has a schema
        return {"type": "json_object"}
    name, parameters = schema
    return {"type": "json_schema", "json_schema": {"name": name, "schema": parameters}}


# ---------------------------------------------------------------- responses


def openai_usage(data: object) -> Usage | None:
    """Usage from a Chat Completions `usage` object (cached and reasoning tokens included)."""
    if not isinstance(data, Mapping):
        return None
    prompt = data.get("prompt_tokens") or 0
    completion = data.get("completion_tokens") or 0
    prompt_details = data.get("prompt_tokens_details")
    completion_details = data.get("completion_tokens_details")
    cached = prompt_details.get("cached_tokens") if isinstance(prompt_details, Mapping) else None
    reasoning = (
        completion_details.get("reasoning_tokens")
        if isinstance(completion_details, Mapping)
        else None
    )
    return Usage(
        input_tokens=prompt,
        output_tokens=completion,
        total_tokens=data.get("total_tokens") or prompt + completion,
        cached_tokens=cached,
        reasoning_tokens=reasoning,
    )


def openai_chunk(data: Mapping[str, Any], key: str) -> AIMessageChunk | None:
    """A chunk from a completion (`key="message"`) or a stream chunk (`key="delta"`).

    Both paths go through here, so a streamed and a whole reply build the
    same message. None for a stream chunk that says nothing new (the
    opening role-only delta).
    """
    parts: list[Any] = []
    metadata: dict[str, Any] = {}
    for choice in data.get("choices") or ():
        if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
            continue
        message = choice.get(key) or {}
        if not isinstance(message, Mapping):
            raise MalformedResponseError(f"choices[0].{key} is not an object: {message!r}")
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            parts.append(ReasoningPart(text=reasoning))
        content = message.get("content")
        if isinstance(content, list):  # some servers send parts even from the assistant
            content = "".join(
                p.get("text", "") for p in content if isinstance(p, Mapping) and "text" in p
            )
        if isinstance(content, str) and content:
            parts.append(TextPart(text=content))
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal:
            metadata["refusal"] = refusal
        for position, call in enumerate(message.get("tool_calls") or ()):
            parts.append(_tool_call_chunk(call, position))
        if choice.get("finish_reason"):
            metadata["finish_reason"] = choice["finish_reason"]
    usage = openai_usage(data.get("usage"))
    if not parts and usage is None and not metadata and key == "delta":
        return None
    if data.get("model"):
        metadata["model_name"] = data["model"]
    if data.get("system_fingerprint"):
        metadata["system_fingerprint"] = data["system_fingerprint"]
    return AIMessageChunk(
        content=parts,
        id=data.get("id") or None,
        usage=usage,
        response_metadata=metadata,
    )


def _tool_call_chunk(call: object, position: int) -> ToolCallChunk:
    if not isinstance(call, Mapping):
        raise MalformedResponseError(f"a tool call is not an object: {call!r}")
    function = call.get("function") or {}
    arguments = function.get("arguments")
    if arguments is not None and not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    index = call.get("index")
    return ToolCallChunk(
        index=index if isinstance(index, int) else position,
        id=call.get("id") or None,
        name=function.get("name") or None,
        args=arguments or "",
    )


def _raise_embedded_error(data: object, provider: str) -> None:
    """Raise the error some servers send with status 200 (or inside a stream)."""
    if not isinstance(data, Mapping) or "error" not in data or data.get("choices"):
        return
    error = data["error"]
    message = error.get("message") if isinstance(error, Mapping) else str(error)
    code = error.get("code") if isinstance(error, Mapping) else None
    status = code if isinstance(code, int) and 400 <= code < 600 else 500
    raise error_for_status(
        provider, status, {}, json.dumps(error).encode(), str(message) if message else None
    )


class OpenAIStreamParser:
    """Chat Completions SSE: `data: {chunk}` events, then `data: [DONE]`.

    A stream counts as complete at `[DONE]`, or -- for servers that omit it
    -- when it ends cleanly after the finish reason (and the usage, when
    asked for). Anything shorter raises: a half reply must not pass for a
    whole one.
    """

    def __init__(self, provider: str, *, expect_usage: bool = True) -> None:
        self._where = provider
        self._sse = SSEDecoder(provider)
        self._expect_usage = expect_usage
        self._done = False
        self._finished = False
        self._has_usage = False
        self._refusal: list[str] = []

    def feed(self, data: bytes) -> list[AIMessageChunk]:
        chunks: list[AIMessageChunk] = []
        for event in self._sse.feed(data):
            self._event(event, chunks)
        return chunks

    def close(self) -> list[AIMessageChunk]:
        chunks: list[AIMessageChunk] = []
        for event in self._sse.close():
            self._event(event, chunks)
        complete = self._done or (self._finished and (self._has_usage or not self._expect_usage))
        if self._sse.truncated or not complete:
            raise stream_cut(self._where, "data: [DONE]")
        return chunks

    def _event(self, event: SSEEvent, chunks: list[AIMessageChunk]) -> None:
        if self._done:
            return
        if event.data.strip() == "[DONE]":
            self._done = True
            return
        data = decode_json(event.data, self._where)
        if event.event == "error" or (isinstance(data, Mapping) and "error" in data):
            _raise_embedded_error(data if "error" in data else {"error": data}, self._where)
        if not isinstance(data, Mapping):
            raise MalformedResponseError(f"{self._where} sent a stream chunk {data!r}")
        chunk = openai_chunk(data, "delta")
        if chunk is None:
            return
        refusal = chunk.response_metadata.get("refusal")
        if refusal is not None:
            # Fragments of one refusal: keep the whole text so far, later chunks win.
            self._refusal.append(refusal)
            chunk = chunk.model_copy(
                update={
                    "response_metadata": {
                        **chunk.response_metadata,
                        "refusal": "".join(self._refusal),
                    }
                }
            )
        self._finished = self._finished or "finish_reason" in chunk.response_metadata
        self._has_usage = self._has_usage or chunk.usage is not None
        chunks.append(chunk)
