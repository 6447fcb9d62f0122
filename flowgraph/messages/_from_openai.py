"""Reading OpenAI Chat Completions messages: `from_openai` (see `_openai` for the mapping).

Below `_coerce`, which hands OpenAI-shaped dicts here; `to_openai`, which
accepts anything `_coerce` does, sits above both.
"""

import json
import mimetypes
import re
from collections.abc import Mapping, Sequence
from typing import Any, overload

from flowgraph.errors import InvalidMessageError
from flowgraph.messages._messages import (
    AnyMessage,
    InvalidToolCall,
)
from flowgraph.messages._validate import type_for_role, validate_message_dict

__all__ = ["OPENAI_FILE_URL_PREFIX", "from_openai", "parse_arguments", "parse_data_url"]

OPENAI_FILE_URL_PREFIX = "openai-file:"
"""A `FilePart` whose url starts with this names a file uploaded to OpenAI by its id."""

_FIELDS_KEPT = {
    "system": ("id", "name", "metadata"),
    "human": ("id", "name", "metadata"),
    "ai": ("id", "name", "metadata", "usage"),
    "tool": ("id", "name", "metadata", "tool_call_id", "status", "artifact"),
}
"""flowgraph's own fields that `from_openai` also reads, so a hand-written dict
mixing both styles (an OpenAI transcript with ids) converts without loss."""

_AUDIO_FORMAT_TO_MIME = {"wav": "audio/wav", "mp3": "audio/mpeg"}

_DATA_URL = re.compile(r"data:(?P<mime>[^;,]*)(?:;[^;,]*)*?;base64,(?P<data>.*)", re.DOTALL)


@overload
def from_openai(messages: Mapping[str, Any]) -> AnyMessage: ...


@overload
def from_openai(messages: Sequence[Mapping[str, Any]]) -> list[AnyMessage]: ...


def from_openai(
    messages: Mapping[str, Any] | Sequence[Mapping[str, Any]],
) -> AnyMessage | list[AnyMessage]:
    """Messages from Chat Completions dicts: one dict in, one message out; a list in, a list out.

    Reads what OpenAI and compatible servers send and accept: roles
    system/developer/user/assistant/tool (and LangChain's human/ai), string
    or part-list content, assistant `tool_calls` (arguments that are not a
    JSON object become an `InvalidToolCall` keeping the raw text and the
    parse error), `reasoning_content` or `reasoning`, and `refusal` (kept in
    `response_metadata["refusal"]`). Data URLs become parts holding `data`
    and `mime_type`. flowgraph's own fields (`id`, `metadata`, `usage`,
    `status`, `artifact`, ...) are read when present; other keys a provider
    adds (`annotations`, `audio`, ...) are ignored.

    Raises InvalidMessageError naming the role, field or list position.
    """
    if isinstance(messages, Mapping):
        return _message_from_openai(messages)
    if not isinstance(messages, (list, tuple)):
        raise InvalidMessageError(
            f"from_openai takes a message dict or a list of them, not {type(messages).__name__}"
        )
    result = []
    for index, item in enumerate(messages):
        try:
            result.append(_message_from_openai(item))
        except InvalidMessageError as exc:
            raise InvalidMessageError(
                f"messages[{index}]: {exc}", message_id=exc.message_id
            ) from exc
    return result


def _message_from_openai(message: object) -> AnyMessage:
    if not isinstance(message, Mapping):
        raise InvalidMessageError(
            f"An OpenAI message is a dict with a 'role', not {type(message).__name__}"
        )
    if "role" not in message:
        raise InvalidMessageError(
            f"An OpenAI message needs a 'role'; got keys {sorted(message)}. "
            "For flowgraph's own dicts (with 'type') use messages_from_dicts"
        )
    kind = type_for_role(message["role"])
    if kind == "remove":
        raise InvalidMessageError(
            "Role 'remove' is flowgraph's RemoveMessage, not an OpenAI message; "
            "build RemoveMessage(id) instead",
            message_id=message.get("id"),
        )
    data: dict[str, Any] = {"type": kind}
    for key in _FIELDS_KEPT[kind]:
        if message.get(key) is not None:
            data[key] = message[key]
    if kind == "ai":
        _ai_from_openai(message, data)
    else:
        content = message.get("content")
        data["content"] = "" if content is None else _content_from_openai(content, [])
    return validate_message_dict(data)


def _ai_from_openai(message: Mapping[str, Any], data: dict[str, Any]) -> None:
    """Fill `data` with an assistant message's parts: reasoning, content, tool calls."""
    refusals: list[str] = []
    if isinstance(message.get("refusal"), str):
        refusals.append(message["refusal"])
    parts: list[Any] = []
    reasoning = message.get("reasoning_content")
    if reasoning is None:
        reasoning = message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        parts.append({"type": "reasoning", "text": reasoning})
    content = message.get("content")
    body = _content_from_openai(content, refusals)
    calls, invalid = _tool_calls_from_openai(message.get("tool_calls"))
    invalid_native = message.get("invalid_tool_calls")
    if invalid_native:
        invalid = [*invalid_native, *invalid]
    if invalid:
        data["invalid_tool_calls"] = invalid
    metadata = message.get("response_metadata")
    if refusals or metadata:
        data["response_metadata"] = dict(metadata or {})
        if refusals:
            data["response_metadata"]["refusal"] = "".join(refusals)
    if not parts and not calls and isinstance(body, str):
        data["content"] = body
        return
    if isinstance(body, str):
        body = [{"type": "text", "text": body}] if body else []
    data["content"] = [*parts, *body, *calls]


def _content_from_openai(content: object, refusals: list[str]) -> Any:
    """Native content from OpenAI content; refusal parts are moved to `refusals`."""
    if content is None:
        return ""
    if not isinstance(content, list):
        return content  # a string, or something validation will name
    parts = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") == "refusal":
            refusals.append(str(part.get("refusal", "")))
        else:
            parts.append(_part_from_openai(part))
    return parts


def _part_from_openai(part: object) -> object:
    """A native part dict for an OpenAI part; anything else is left for validation."""
    if not isinstance(part, Mapping):
        return part
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": part.get("text")}
    if kind == "image_url":
        image = part.get("image_url")
        if isinstance(image, str):  # a shorthand some clients write
            image = {"url": image}
        if not isinstance(image, Mapping):
            return {"type": "image", "image_url": image}  # validation names the field
        native = _media_from_url("image", image.get("url"))
        if image.get("detail") is not None:
            native["detail"] = image["detail"]
        return native
    if kind == "input_audio":
        audio = part.get("input_audio")
        if not isinstance(audio, Mapping):
            return {"type": "audio", "input_audio": audio}
        audio_format = audio.get("format")
        mime_type = (
            _AUDIO_FORMAT_TO_MIME.get(audio_format, f"audio/{audio_format}")
            if isinstance(audio_format, str)
            else None
        )
        return {"type": "audio", "data": audio.get("data"), "mime_type": mime_type}
    if kind in ("audio_url", "video_url"):
        media = part.get(kind)
        url = media.get("url") if isinstance(media, Mapping) else media
        return _media_from_url(kind.removesuffix("_url"), url)
    if kind == "file" and "file" in part:
        return _file_from_openai(part["file"])
    return dict(part)


def _media_from_url(kind: str, url: object) -> dict[str, Any]:
    parsed = parse_data_url(url) if isinstance(url, str) else None
    if parsed is None:
        return {"type": kind, "url": url}
    data, mime_type = parsed
    return {"type": kind, "data": data, "mime_type": mime_type}


def _file_from_openai(file: object) -> dict[str, Any]:
    if not isinstance(file, Mapping):
        return {"type": "file", "file": file}
    native: dict[str, Any] = {"type": "file"}
    filename = file.get("filename")
    if filename is not None:
        native["filename"] = filename
    file_data = file.get("file_data")
    if file_data is None and file.get("file_id") is not None:
        native["url"] = f"{OPENAI_FILE_URL_PREFIX}{file['file_id']}"
        return native
    parsed = parse_data_url(file_data) if isinstance(file_data, str) else None
    if parsed is not None:
        native["data"], native["mime_type"] = parsed
    else:  # bare base64, as the field's name suggests
        native["data"] = file_data
        if isinstance(filename, str):
            native["mime_type"] = mimetypes.guess_type(filename)[0]
    return native


def parse_data_url(url: str) -> tuple[str, str | None] | None:
    """(base64 data, mime type) of a base64 data: URL, else None."""
    if not url.startswith("data:"):
        return None
    match = _DATA_URL.fullmatch(url)
    if match is None:
        return None
    return match["data"], match["mime"] or None


def _tool_calls_from_openai(calls: object) -> tuple[list[Any], list[dict[str, Any]]]:
    """(tool call parts, invalid tool calls) from an assistant's `tool_calls`."""
    if not calls:
        return [], []
    if not isinstance(calls, list):
        raise InvalidMessageError(
            f"tool_calls must be a list of tool calls, not {type(calls).__name__}"
        )
    parts: list[Any] = []
    invalid: list[dict[str, Any]] = []
    for index, call in enumerate(calls):
        if not isinstance(call, Mapping):
            raise InvalidMessageError(
                f"tool_calls[{index}] must be a dict with id, type and function, "
                f"not {type(call).__name__}"
            )
        function = call.get("function")
        if function is None:  # flowgraph's own shape: {"id", "name", "args"}
            parts.append({**call, "type": "tool_call"})
            continue
        if not isinstance(function, Mapping):
            function = {}
        call_id, name, raw = call.get("id"), function.get("name"), function.get("arguments")
        args, error = parse_arguments(raw)
        if not isinstance(call_id, str) or not call_id:
            error = error or "the tool call has no id"
        if not isinstance(name, str) or not name:
            error = error or "the tool call names no function"
        if error is None:
            parts.append({"type": "tool_call", "id": call_id, "name": name, "args": args})
        else:
            invalid.append(
                InvalidToolCall(
                    id=call_id if isinstance(call_id, str) else None,
                    name=name if isinstance(name, str) else None,
                    args=_raw_arguments(raw),
                    error=error,
                ).model_dump()
            )
    return parts, invalid


def parse_arguments(raw: object) -> tuple[dict[str, Any], str | None]:
    """(parsed arguments, None), or ({}, why they are not a JSON object)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None  # some servers send "" for a call without arguments
    if isinstance(raw, Mapping):
        if all(isinstance(key, str) for key in raw):
            return dict(raw), None
        return {}, "arguments must be a JSON object, got a mapping with keys that are not strings"
    if not isinstance(raw, str):
        return {}, f"arguments must be a JSON string, got {type(raw).__name__}"
    try:
        args = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"arguments are not valid JSON: {exc}"
    if not isinstance(args, dict):
        return {}, f"arguments must be a JSON object, got {type(args).__name__}"
    return args, None


def _raw_arguments(raw: object) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return json.dumps(raw)
    except (TypeError, ValueError):
        return repr(raw)
