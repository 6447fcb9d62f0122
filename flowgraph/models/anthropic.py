"""`AnthropicChatModel`: Anthropic's Messages API (``POST /v1/messages``).

How messages map to content blocks:

- system messages become the top-level ``system`` (several are joined);
- human messages: text, ``image`` (base64 or URL source) and ``document``
  (a PDF or other file, base64 or URL) blocks;
- AI messages: ``thinking`` blocks with their ``signature`` (kept so the
  next turn can send them back, as Anthropic requires during tool use; a
  reasoning part without a signature, from another provider, is left out),
  ``text`` and ``tool_use`` blocks, in part order;
- tool messages: ``tool_result`` blocks in a user turn (``is_error`` for an
  error status); consecutive turns of one role are merged into one;
- a tool call whose arguments did not parse goes out as a ``tool_use`` with
  ``input: {}`` (the API takes only an object), and the raw text is quoted
  in the ``tool_result`` that answers it (see `flowgraph.models._history`).

Options: ``max_tokens`` is required by the API (default 4096 here),
``stop`` becomes ``stop_sequences``, `tool_choice` maps to ``auto`` /
``none`` / ``any`` / ``{"type": "tool", "name"}``, a `response_format`
schema goes to ``output_config.format`` (objects get
``additionalProperties: false``, which the API demands), `thinking_budget`
turns extended thinking on; `seed` has no Anthropic equivalent and is not
sent. `ChatOptions.extra` is merged into the body last.

Streaming reads the SSE events ``message_start``, ``content_block_start``
/ ``_delta`` (``text_delta``, ``thinking_delta``, ``signature_delta``,
``input_json_delta``) / ``_stop``, ``message_delta`` (stop reason, usage),
``message_stop``, ``ping`` and ``error``; unknown events are skipped, as
the API's versioning policy asks. Usage counts cached input in
``input_tokens`` and reports cache reads as ``cached_tokens``.
``stop_reason`` is kept and mapped to ``finish_reason``: end_turn and
stop_sequence -> stop, max_tokens -> length, tool_use -> tool_calls,
refusal -> content_filter. ``redacted_thinking`` blocks are not kept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, ClassVar, Unpack
from urllib.parse import urlsplit

import httpx

from flowgraph.errors import InvalidMessageError, MalformedResponseError
from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    AudioPart,
    BaseMessage,
    FilePart,
    ImagePart,
    ReasoningPart,
    TextPart,
    ToolCallChunk,
    ToolCallPart,
    ToolMessage,
    Usage,
    VideoPart,
)
from flowgraph.models._base import ResponseFormat, response_schema
from flowgraph.models._call import Call
from flowgraph.models._framing import SSEDecoder, SSEEvent, decode_json
from flowgraph.models._history import request_history
from flowgraph.models._http import HttpChatModel, HttpOptions, error_for_status, stream_cut

__all__ = [
    "AnthropicChatModel",
    "AnthropicStreamParser",
    "anthropic_messages",
    "build_anthropic_body",
]

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}

_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class AnthropicChatModel(HttpChatModel):
    """A chat model over Anthropic's Messages API.

    `base_url` defaults to ``ANTHROPIC_BASE_URL`` or Anthropic's own, and
    `api_key` to ``ANTHROPIC_API_KEY`` (only then, or for api.anthropic.com).
    `max_tokens` is the default output limit (the API requires one);
    `thinking_budget` turns on extended thinking with that many tokens.
    """

    provider: ClassVar[str] = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        thinking_budget: int | None = None,
        **kwargs: Unpack[HttpOptions],
    ) -> None:
        own_server = base_url is None or urlsplit(base_url).hostname == "api.anthropic.com"
        base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_BASE_URL
        if api_key is None and own_server:  # never send Anthropic's key to another server
            api_key = os.environ.get("ANTHROPIC_API_KEY")
        super().__init__(model, base_url=base_url, api_key=api_key, **kwargs)
        self.max_tokens = max_tokens
        self.thinking_budget = thinking_budget

    def _request(self, call: Call) -> httpx.Request:
        body = build_anthropic_body(
            call, max_tokens=self.max_tokens, thinking_budget=self.thinking_budget
        )
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        if call.stream:
            headers["accept"] = "text/event-stream"
        path = "/messages" if self.base_url.endswith("/v1") else "/v1/messages"
        return self._json_request(path, body, headers)

    def _parse_response(self, data: Any, call: Call) -> AIMessageChunk:
        if not isinstance(data, Mapping) or not isinstance(data.get("content"), list):
            if isinstance(data, Mapping) and data.get("type") == "error":
                raise _stream_error(data, self.provider)
            raise MalformedResponseError(
                f"{self.provider} sent a message without 'content': {str(data)[:300]}"
            )
        parts = [_block(index, block) for index, block in enumerate(data["content"])]
        return AIMessageChunk(
            content=[part for part in parts if part is not None],
            id=data.get("id") or None,
            usage=anthropic_usage(data.get("usage")),
            response_metadata=_stop_metadata(data.get("stop_reason"), data.get("model")),
        )

    def _stream_parser(self, call: Call) -> AnthropicStreamParser:
        return AnthropicStreamParser(self.provider)


# ----------------------------------------------------------------- requests


def build_anthropic_body(
    call: Call, *, max_tokens: int = DEFAULT_MAX_TOKENS, thinking_budget: int | None = None
) -> dict[str, Any]:
    """The Messages API request body for `call` (a pure function)."""
    options = call.options
    system, messages = anthropic_messages(call.messages)
    body: dict[str, Any] = {
        "model": call.model,
        "max_tokens": options.max_tokens if options.max_tokens is not None else max_tokens,
        "messages": messages,
    }
    if system:
        body["system"] = system
    if call.tools:
        body["tools"] = [
            {
                "name": tool.name,
                **({"description": tool.description} if tool.description else {}),
                "input_schema": dict(tool.parameters),
            }
            for tool in call.tools
        ]
    if options.tool_choice is not None:
        body["tool_choice"] = _tool_choice(options.tool_choice)
    if options.response_format is not None:
        body["output_config"] = {"format": _output_format(options.response_format)}
    if thinking_budget is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.top_p is not None:
        body["top_p"] = options.top_p
    if options.stop is not None:
        body["stop_sequences"] = list(options.stop)
    if call.stream:
        body["stream"] = True
    if options.extra:
        body.update(options.extra)
    return body


def _tool_choice(choice: str) -> dict[str, Any]:
    if choice in ("auto", "none"):
        return {"type": choice}
    if choice == "required":
        return {"type": "any"}
    return {"type": "tool", "name": choice}


def _output_format(response_format: ResponseFormat) -> dict[str, Any]:
    schema = response_schema(response_format)
    if schema is None:
        raise ValueError(
            "Anthropic's structured output needs a JSON schema; pass a pydantic model "
            "class or a schema dict as response_format, not 'json'"
        )
    return {"type": "json_schema", "schema": _closed(schema[1])}


def _closed(schema: Any) -> Any:
    """The schema with ``additionalProperties: false`` on every object, as the API demands."""
    if isinstance(schema, list):
        return [_closed(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {key: _closed(value) for key, value in schema.items()}
    if out.get("type") == "object" and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def anthropic_messages(messages: list[BaseMessage]) -> tuple[str, list[dict[str, Any]]]:
    """(system text, turns) for the Messages API; one role's consecutive turns are merged.

    A call whose arguments are not a JSON object goes out with ``input: {}``,
    its raw text quoted in the result that answers it (`request_history`).
    """
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in request_history(messages):
        if message.type == "system":
            system.append(message.text)
            continue
        role = "assistant" if message.type == "ai" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            previous = turns[-1]["content"]
            if isinstance(previous, str):
                previous = [{"type": "text", "text": previous}]
            turns[-1]["content"] = previous + blocks
        elif len(blocks) == 1 and blocks[0]["type"] == "text" and role == "user":
            turns.append({"role": role, "content": blocks[0]["text"]})
        else:
            turns.append({"role": role, "content": blocks})
    return "\n\n".join(text for text in system if text), turns


def _blocks(message: BaseMessage) -> list[dict[str, Any]]:
    if isinstance(message, ToolMessage):
        content: Any = message.content
        if not isinstance(content, str):
            content = [_part_block(part, message) for part in content if _has_block(part)]
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": content,
        }
        if message.status == "error":
            block["is_error"] = True
        return [block]
    content = message.content_blocks
    blocks: list[dict[str, Any]] = []
    if isinstance(content, str):
        if content:
            blocks.append({"type": "text", "text": content})
    else:
        for part in content:
            if isinstance(part, ReasoningPart):
                if isinstance(message, AIMessage) and part.signature:
                    blocks.append(
                        {"type": "thinking", "thinking": part.text, "signature": part.signature}
                    )
            elif isinstance(part, ToolCallPart):
                blocks.append(_tool_use(part.id, part.name, part.args))
            elif isinstance(part, TextPart):
                if part.text:
                    blocks.append({"type": "text", "text": part.text})
            else:
                blocks.append(_part_block(part, message))
    if isinstance(message, AIMessage):
        # Answered by error ToolMessages, so the API must see the calls they answer; also
        # when the content is a string (a call cut off by max_tokens often has no text).
        blocks.extend(
            _tool_use(call.id, call.name, {})
            for call in message.invalid_tool_calls
            if call.id and call.name
        )
    return blocks


def _tool_use(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def _has_block(part: object) -> bool:
    return not isinstance(part, ReasoningPart) and not (
        isinstance(part, TextPart) and not part.text
    )


def _part_block(part: object, message: BaseMessage) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, (ImagePart, FilePart)):
        kind = "image" if isinstance(part, ImagePart) else "document"
        if part.data is not None:
            mime_type = part.mime_type or ("application/pdf" if kind == "document" else None)
            if mime_type is None:
                raise InvalidMessageError(
                    "ImagePart with inline data needs mime_type= (image/png, image/jpeg, ...) "
                    "for Anthropic",
                    message_id=message.id,
                )
            source: dict[str, Any] = {"type": "base64", "media_type": mime_type, "data": part.data}
        elif part.url is not None and part.url.startswith("data:") and ";base64," in part.url:
            head, _, data = part.url.partition(";base64,")
            source = {"type": "base64", "media_type": head.removeprefix("data:"), "data": data}
        else:
            source = {"type": "url", "url": part.url}
        return {"type": kind, "source": source}
    if isinstance(part, (AudioPart, VideoPart)):
        raise InvalidMessageError(
            f"Anthropic's Messages API takes no {type(part).__name__}; send text, "
            "images or documents",
            message_id=message.id,
        )
    raise InvalidMessageError(f"Cannot send {part!r} to Anthropic", message_id=message.id)


# ---------------------------------------------------------------- responses


def anthropic_usage(data: object) -> Usage | None:
    """Usage with cache reads and writes counted as input, cache reads as cached."""
    if not isinstance(data, Mapping):
        return None
    cache_read = data.get("cache_read_input_tokens")
    cache_write = data.get("cache_creation_input_tokens") or 0
    input_tokens = (data.get("input_tokens") or 0) + (cache_read or 0) + cache_write
    return Usage(
        input_tokens=input_tokens,
        output_tokens=data.get("output_tokens") or 0,
        cached_tokens=cache_read,
    )


def _stop_metadata(stop_reason: object, model: object) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if isinstance(stop_reason, str):
        metadata["finish_reason"] = FINISH_REASONS.get(stop_reason, stop_reason)
        metadata["stop_reason"] = stop_reason
    if model:
        metadata["model_name"] = model
    return metadata


def _block(index: int, block: object) -> Any:
    """The chunk part for a whole content block (None for blocks not kept)."""
    if not isinstance(block, Mapping):
        raise MalformedResponseError(f"a content block is not an object: {block!r}")
    kind = block.get("type")
    if kind == "text":
        return TextPart(text=block.get("text") or "")
    if kind == "thinking":
        return ReasoningPart(text=block.get("thinking") or "", signature=block.get("signature"))
    if kind == "tool_use":
        arguments = block.get("input") or {}
        args = json.dumps(arguments, ensure_ascii=False, separators=(",", ":")) if arguments else ""
        return ToolCallChunk(index=index, id=block.get("id"), name=block.get("name"), args=args)
    return None


def _stream_error(data: Mapping[str, Any], provider: str) -> Exception:
    error = data.get("error")
    kind = error.get("type") if isinstance(error, Mapping) else None
    message = error.get("message") if isinstance(error, Mapping) else None
    status = _ERROR_STATUS.get(kind or "", 500)
    return error_for_status(provider, status, {}, json.dumps(data).encode(), message)


class AnthropicStreamParser:
    """The Messages API's SSE events as chunks; complete only at ``message_stop``."""

    def __init__(self, provider: str) -> None:
        self._where = provider
        self._sse = SSEDecoder(provider)
        self._id: str | None = None
        self._model: str | None = None
        self._usage: dict[str, Any] = {}
        self._done = False

    def feed(self, data: bytes) -> list[AIMessageChunk]:
        chunks: list[AIMessageChunk] = []
        for event in self._sse.feed(data):
            self._event(event, chunks)
        return chunks

    def close(self) -> list[AIMessageChunk]:
        chunks: list[AIMessageChunk] = []
        for event in self._sse.close():
            self._event(event, chunks)
        if self._sse.truncated or not self._done:
            raise stream_cut(self._where, "message_stop")
        return chunks

    def _event(self, event: SSEEvent, chunks: list[AIMessageChunk]) -> None:
        if self._done:
            return
        data = decode_json(event.data, self._where)
        if not isinstance(data, Mapping):
            raise MalformedResponseError(f"{self._where} sent an event {data!r}")
        kind = data.get("type", event.event)
        if kind == "error":
            raise _stream_error(data, self._where)
        if kind == "message_start":
            message = data.get("message") or {}
            self._id = message.get("id")
            self._model = message.get("model")
            self._usage = dict(message.get("usage") or {})
        elif kind == "content_block_start":
            part = self._start(data.get("index", 0), data.get("content_block") or {})
            if part is not None:
                chunks.append(self._chunk([part]))
        elif kind == "content_block_delta":
            part = self._delta(data.get("index", 0), data.get("delta") or {})
            if part is not None:
                chunks.append(self._chunk([part]))
        elif kind == "message_delta":
            delta = data.get("delta") or {}
            self._usage.update(
                {k: v for k, v in (data.get("usage") or {}).items() if v is not None}
            )
            chunks.append(
                AIMessageChunk(
                    id=self._id,
                    usage=anthropic_usage(self._usage),
                    response_metadata=_stop_metadata(delta.get("stop_reason"), self._model),
                )
            )
        elif kind == "message_stop":
            self._done = True

    def _chunk(self, parts: list[Any]) -> AIMessageChunk:
        return AIMessageChunk(content=parts, id=self._id)

    def _start(self, index: int, block: Mapping[str, Any]) -> Any:
        kind = block.get("type")
        if kind == "tool_use":
            # The input arrives as input_json_delta fragments; a full one here is rare.
            arguments = block.get("input") or {}
            args = json.dumps(arguments, separators=(",", ":")) if arguments else ""
            return ToolCallChunk(index=index, id=block.get("id"), name=block.get("name"), args=args)
        if kind == "text" and block.get("text"):
            return TextPart(text=block["text"])
        if kind == "thinking" and (block.get("thinking") or block.get("signature")):
            return ReasoningPart(text=block.get("thinking") or "", signature=block.get("signature"))
        return None

    def _delta(self, index: int, delta: Mapping[str, Any]) -> Any:
        kind = delta.get("type")
        if kind == "text_delta":
            return TextPart(text=delta.get("text") or "")
        if kind == "thinking_delta":
            return ReasoningPart(text=delta.get("thinking") or "")
        if kind == "signature_delta":
            return ReasoningPart(text="", signature=delta.get("signature") or None)
        if kind == "input_json_delta":
            return ToolCallChunk(index=index, args=delta.get("partial_json") or "")
        return None
