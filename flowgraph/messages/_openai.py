"""OpenAI Chat Completions messages: `to_openai` here, `from_openai` in `_from_openai`.

The mapping, message by message::

    SystemMessage   <->  {"role": "system", ...}      ("developer" is read as system)
    HumanMessage    <->  {"role": "user", ...}        ("human" is read too)
    AIMessage       <->  {"role": "assistant", ...}   ("ai" is read too)
    ToolMessage     <->  {"role": "tool", "tool_call_id": ...}

and part by part::

    TextPart        <->  {"type": "text", "text": ...}
    ImagePart       <->  {"type": "image_url", "image_url": {"url": ..., "detail": ...}}
    AudioPart(data) <->  {"type": "input_audio", "input_audio": {"data": ..., "format": "wav"}}
    AudioPart(url)  <->  {"type": "audio_url", "audio_url": {"url": ...}}        (vLLM extension)
    VideoPart       <->  {"type": "video_url", "video_url": {"url": ...}}        (vLLM, Qwen)
    FilePart(data)  <->  {"type": "file", "file": {"file_data": data URL, "filename": ...}}
    FilePart(url="openai-file:<id>") <-> {"type": "file", "file": {"file_id": <id>}}
    ReasoningPart   <->  assistant "reasoning_content" (DeepSeek, Qwen; "reasoning" is read too)
    ToolCallPart    <->  assistant "tool_calls": [{"id", "type": "function",
                                                   "function": {"name", "arguments": JSON}}]

Inline media travel as ``data:<mime>;base64,<data>`` URLs and come back as
parts holding `data` and `mime_type`. What Chat Completions has no place for
is dropped by `to_openai`: message `id`, `metadata`, `AIMessage.usage` and
`response_metadata`, `ToolMessage.status` and `artifact`, a reasoning part's
`signature`, and reasoning parts outside AI messages. The order of an
AIMessage's parts survives where the format can express it: reasoning, then
content, then tool calls; other interleavings are regrouped in that order.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Mapping, Sequence
from typing import Any, overload

from flowgraph.errors import InvalidMessageError
from flowgraph.messages._coerce import MessageLike, coerce_message
from flowgraph.messages._from_openai import OPENAI_FILE_URL_PREFIX, parse_data_url
from flowgraph.messages._messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    RemoveMessage,
    ToolMessage,
)
from flowgraph.messages._parts import (
    AudioPart,
    FilePart,
    ImagePart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    VideoPart,
)

__all__ = ["to_openai"]

_TYPE_TO_ROLE = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}

_AUDIO_MIME_TO_FORMAT = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/vnd.wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


@overload
def to_openai(
    messages: BaseMessage | RemoveMessage | Mapping[str, Any], *, include_reasoning: bool = True
) -> dict[str, Any]: ...


@overload
def to_openai(
    messages: Sequence[MessageLike], *, include_reasoning: bool = True
) -> list[dict[str, Any]]: ...


def to_openai(
    messages: MessageLike | Sequence[MessageLike], *, include_reasoning: bool = True
) -> dict[str, Any] | list[dict[str, Any]]:
    """Chat Completions message dicts: one message in, one dict out; a list in, a list out.

    Anything `coerce_message` accepts may stand in for a message. Fields the
    format cannot carry are dropped: `id`, `metadata`, `usage`,
    `response_metadata`, `ToolMessage.status` (say "error" in the content, as
    `ToolNode` does) and `artifact`, and `ReasoningPart.signature`. Reasoning
    goes out as `reasoning_content` unless `include_reasoning=False` (some
    providers refuse it in requests). Invalid tool calls go out among
    `tool_calls` with their raw arguments, so the error `ToolMessage` that
    answers them still matches a call; one without an id or name is dropped.
    That is the transcript as the model wrote it; a *request* needs arguments
    that parse as a JSON object (llama.cpp refuses the whole history
    otherwise), so `OpenAIChatModel` sends ``"{}"`` for them and quotes the
    raw text in the result that answers the call (`flowgraph.models._history`).

    Raises InvalidMessageError for what has no wire form at all: a
    `RemoveMessage`, inline media without `mime_type`, a file given by a link.
    """
    if isinstance(messages, (list, tuple)):
        return [_message_to_openai(coerce_message(m), include_reasoning) for m in messages]
    return _message_to_openai(coerce_message(messages), include_reasoning)


def _message_to_openai(message: AnyMessage, include_reasoning: bool) -> dict[str, Any]:
    if isinstance(message, RemoveMessage):
        raise InvalidMessageError(
            f"RemoveMessage({message.id!r}) is an instruction to add_messages, not a message; "
            "it has no OpenAI form. Merge it with add_messages before converting the list",
            message_id=message.id,
        )
    if isinstance(message, AIMessage):
        out = _ai_to_openai(message, include_reasoning)
    else:
        out = {
            "role": _TYPE_TO_ROLE[message.type],
            "content": _content_to_openai(message),
        }
    if message.name is not None:
        out["name"] = message.name
    if isinstance(message, ToolMessage):
        out["tool_call_id"] = message.tool_call_id
    return out


def _content_to_openai(message: BaseMessage) -> str | list[dict[str, Any]]:
    content = message.content
    if isinstance(content, str):
        return content
    return [
        _part_to_openai(part, message) for part in content if not isinstance(part, ReasoningPart)
    ]


def _ai_to_openai(message: AIMessage, include_reasoning: bool) -> dict[str, Any]:
    content = message.content_blocks
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    body: list[TextPart | ImagePart | AudioPart | VideoPart | FilePart] = []
    if not isinstance(content, str):
        for part in content:
            if isinstance(part, ReasoningPart):
                reasoning.append(part.text)
            elif isinstance(part, ToolCallPart):
                calls.append(_tool_call_to_openai(part, message))
            else:
                body.append(part)
    calls.extend(
        _call_dict(call.id, call.name, call.args)
        for call in message.invalid_tool_calls
        if call.id is not None and call.name is not None
    )
    text: str | list[dict[str, Any]] | None
    if isinstance(content, str):
        text = content
    elif all(isinstance(part, TextPart) for part in body):
        # Many OpenAI-compatible servers accept only a string from the assistant.
        text = "".join(part.text for part in body if isinstance(part, TextPart))
    else:
        text = [_part_to_openai(part, message) for part in body]
    out: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        out["tool_calls"] = calls
        if text == "":
            out["content"] = None  # what OpenAI itself sends with tool calls and no text
    if include_reasoning and reasoning:
        out["reasoning_content"] = "".join(reasoning)
    return out


def _tool_call_to_openai(part: ToolCallPart, message: AIMessage) -> dict[str, Any]:
    try:
        arguments = json.dumps(part.args, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InvalidMessageError(
            f"Tool call {part.id!r} ({part.name}) has arguments that are not JSON: {exc}; "
            "tool arguments must be JSON values to reach an OpenAI model",
            message_id=message.id,
        ) from exc
    return _call_dict(part.id, part.name, arguments)


def _call_dict(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _part_to_openai(
    part: TextPart | ImagePart | AudioPart | VideoPart | FilePart, message: BaseMessage
) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        image: dict[str, Any] = {"url": _url_of(part, message)}
        if part.detail is not None:
            image["detail"] = part.detail
        return {"type": "image_url", "image_url": image}
    if isinstance(part, AudioPart):
        return _audio_to_openai(part, message)
    if isinstance(part, VideoPart):
        return {"type": "video_url", "video_url": {"url": _url_of(part, message)}}
    return _file_to_openai(part, message)


def _url_of(part: ImagePart | AudioPart | VideoPart | FilePart, message: BaseMessage) -> str:
    """The part's url, or its inline data as a data: URL."""
    if part.url is not None:
        return part.url
    mime_type = part.mime_type
    if mime_type is None and isinstance(part, FilePart) and part.filename:
        mime_type = mimetypes.guess_type(part.filename)[0]
    if mime_type is None:
        raise InvalidMessageError(
            f"{type(part).__name__} with inline data needs mime_type= (e.g. image/png, "
            "audio/wav, application/pdf) to become a data: URL for OpenAI",
            message_id=message.id,
        )
    return f"data:{mime_type};base64,{part.data}"


def _audio_to_openai(part: AudioPart, message: BaseMessage) -> dict[str, Any]:
    data, mime_type = part.data, part.mime_type
    if part.url is not None:
        parsed = parse_data_url(part.url)
        if parsed is None:
            return {"type": "audio_url", "audio_url": {"url": part.url}}
        data, mime_type = parsed
    if mime_type is None:
        raise InvalidMessageError(
            "AudioPart with inline data needs mime_type= (audio/wav or audio/mpeg) "
            "to name OpenAI's input_audio format",
            message_id=message.id,
        )
    audio_format = _AUDIO_MIME_TO_FORMAT.get(mime_type)
    if audio_format is None:
        if not mime_type.startswith("audio/"):
            raise InvalidMessageError(
                f"AudioPart has mime_type {mime_type!r}; input_audio needs an audio/* type "
                "such as audio/wav or audio/mpeg",
                message_id=message.id,
            )
        audio_format = mime_type.removeprefix("audio/").removeprefix("x-")
    return {"type": "input_audio", "input_audio": {"data": data, "format": audio_format}}


def _file_to_openai(part: FilePart, message: BaseMessage) -> dict[str, Any]:
    file: dict[str, Any]
    url = part.url
    if url is not None and url.startswith(OPENAI_FILE_URL_PREFIX):
        file = {"file_id": url.removeprefix(OPENAI_FILE_URL_PREFIX)}
    elif url is not None and not url.startswith("data:"):
        raise InvalidMessageError(
            f"Chat Completions takes a file inline or by uploaded file id, not by link {url!r}; "
            f"pass data= (the bytes) or upload it and use url='{OPENAI_FILE_URL_PREFIX}<file id>'",
            message_id=message.id,
        )
    else:
        file = {"file_data": _url_of(part, message)}
    if part.filename is not None:
        file["filename"] = part.filename
    return {"type": "file", "file": file}


# -------------------------------------------------------------- from_openai
