"""Messages and their parts on the wire: positional records, built back without validation.

Message histories are most of a checkpoint, so their encoding is the hot
path. Each built-in class is a record `[code, field, ...]` in a fixed field
order (append only: a later flowgraph may add trailing fields and must keep
reading records without them). A message's parts, tool calls, invalid tool
calls and usage sit inline in its record, and a list of messages held by
a model field or as a `MessageList` (what `add_messages` returns) is one
ext value holding all its records, so a history costs one Python call per
message, not one per object, and one nested packer call in all.

Loading builds the frozen pydantic instances directly, as `model_construct`
does but without its per-field Python loop: the records were validated
models when they were written and the envelope's CRC says they are
unchanged. Each field's type is still checked (a few `type(x) is` tests), so
a record that is not what this module writes raises a DeserializationError
instead of producing a half-valid message.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from operator import itemgetter
from typing import Any, Final, NoReturn, TypeAlias

from pydantic import BaseModel

from flowgraph.checkpoint._codec.core import DECODERS, ENCODERS, Corrupt, Decoder, Encoder, ext
from flowgraph.messages import (
    AIMessage,
    AudioPart,
    FilePart,
    HumanMessage,
    ImagePart,
    InvalidToolCall,
    ReasoningPart,
    RemoveMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolCallPart,
    ToolMessage,
    Usage,
    VideoPart,
)
from flowgraph.reducers import MessageList

__all__ = ["MESSAGE_CLASSES", "messages_value"]

# Ext codes and record tags of flowgraph's own classes (16-39). Append only.
SYSTEM: Final = 16
HUMAN: Final = 17
AI: Final = 18
TOOL: Final = 19
REMOVE: Final = 20
TEXT: Final = 21
IMAGE: Final = 22
AUDIO: Final = 23
VIDEO: Final = 24
FILE: Final = 25
REASONING: Final = 26
TOOL_CALL_PART: Final = 27
TOOL_CALL: Final = 28
INVALID_TOOL_CALL: Final = 29
USAGE: Final = 30
MESSAGE_LIST: Final = 31
MESSAGES: Final = 32

Record: TypeAlias = list[Any]
_NONE = type(None)
_OPTIONAL_STR = frozenset({str, _NONE})
_OPTIONAL_INT = frozenset({int, _NONE})
_STATUSES = frozenset({"success", "error"})
_DETAILS = frozenset({None, "auto", "low", "high"})

_new = object.__new__
_set_dict = vars(BaseModel)["__dict__"].__set__
_set_fields_set = vars(BaseModel)["__pydantic_fields_set__"].__set__
_set_extra = vars(BaseModel)["__pydantic_extra__"].__set__
_set_private = vars(BaseModel)["__pydantic_private__"].__set__

_ALL_SET: dict[type, set[str]] = {}
"""Each built-in class's field names, as the `model_fields_set` of every instance loaded.

Every field counts as set, as after `model_validate` of what `model_dump()`
gives, so a checkpoint round trip and `messages_from_dicts(messages_to_dicts(...))`
produce identical objects. One set per class is shared by its instances:
these classes are frozen, and pydantic only ever changes the set of a
non-frozen model in place (`model_copy` copies it first).
"""


def _instance(cls: type[BaseModel], values: dict[str, Any]) -> Any:
    """A model holding exactly `values` (all its fields, in declaration order), unvalidated."""
    obj = _new(cls)
    _set_dict(obj, values)
    _set_fields_set(obj, _ALL_SET[cls])
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


def _bad(what: str) -> NoReturn:
    raise Corrupt(f"bad {what} record")


# --- parts -----------------------------------------------------------------


def _data_to_wire(data: str | None) -> str | bytes | None:
    """Base64 text as the raw bytes when that is lossless: a quarter smaller."""
    if data is None:
        return None
    raw = base64.b64decode(data)
    return raw if base64.b64encode(raw).decode("ascii") == data else data


def _text_record(part: TextPart) -> Record:
    return [TEXT, part.__dict__["text"]]


def _reasoning_record(part: ReasoningPart) -> Record:
    values = part.__dict__
    return [REASONING, values["text"], values["signature"]]


def _tool_call_part_record(part: ToolCallPart) -> Record:
    values = part.__dict__
    return [TOOL_CALL_PART, values["id"], values["name"], values["args"]]


def _media_record(code: int, extra: str | None) -> Callable[[Any], Record]:
    def record(part: Any) -> Record:
        values = part.__dict__
        fields = [code, values["url"], _data_to_wire(values["data"]), values["mime_type"]]
        if extra is not None:
            fields.append(values[extra])
        return fields

    return record


_PART_RECORDS: dict[type, Callable[[Any], Record]] = {
    TextPart: _text_record,
    ToolCallPart: _tool_call_part_record,
    ReasoningPart: _reasoning_record,
    ImagePart: _media_record(IMAGE, "detail"),
    AudioPart: _media_record(AUDIO, None),
    VideoPart: _media_record(VIDEO, None),
    FilePart: _media_record(FILE, "filename"),
}


def _content_to_wire(content: list[Any]) -> list[Record]:
    records = []
    for part in content:
        cls = type(part)
        values = part.__dict__
        if cls is ToolCallPart:  # the common parts inline: this runs for every AI message
            records.append([TOOL_CALL_PART, values["id"], values["name"], values["args"]])
        elif cls is TextPart:
            records.append([TEXT, values["text"]])
        elif cls in _PART_RECORDS:
            records.append(_PART_RECORDS[cls](part))
        else:
            raise TypeError(f"message content holds a {cls.__qualname__}, not a content part")
    return records


def _text_part(record: Record) -> TextPart:
    if len(record) != 2 or type(record[1]) is not str:
        _bad("TextPart")
    return _instance(TextPart, {"type": "text", "text": record[1]})  # type: ignore[no-any-return]


def _reasoning_part(record: Record) -> ReasoningPart:
    if len(record) != 3 or type(record[1]) is not str or type(record[2]) not in _OPTIONAL_STR:
        _bad("ReasoningPart")
    values = {"type": "reasoning", "text": record[1], "signature": record[2]}
    return _instance(ReasoningPart, values)  # type: ignore[no-any-return]


def _tool_call_part(record: Record) -> ToolCallPart:
    if (
        len(record) != 4
        or type(record[1]) is not str
        or type(record[2]) is not str
        or type(record[3]) is not dict
    ):
        _bad("ToolCallPart")
    values = {"type": "tool_call", "id": record[1], "name": record[2], "args": record[3]}
    return _instance(ToolCallPart, values)  # type: ignore[no-any-return]


def _media_part(cls: type[BaseModel], kind: str, extra: str | None) -> Callable[[Record], Any]:
    size = 4 if extra is None else 5
    name = cls.__name__

    def build(record: Record) -> Any:
        if len(record) != size:
            _bad(name)
        url, data, mime_type = record[1], record[2], record[3]
        if type(data) is bytes:
            data = base64.b64encode(data).decode("ascii")
        elif type(data) is str:
            try:
                base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                _bad(name)
        if (
            type(url) not in _OPTIONAL_STR
            or type(data) not in _OPTIONAL_STR
            or (url is None) == (data is None)
            or type(mime_type) not in _OPTIONAL_STR
        ):
            _bad(name)
        values = {"url": url, "data": data, "mime_type": mime_type, "type": kind}  # field order
        if extra == "detail":
            if record[4] not in _DETAILS:
                _bad(name)
            values["detail"] = record[4]
        elif extra is not None:
            if type(record[4]) not in _OPTIONAL_STR:
                _bad(name)
            values[extra] = record[4]
        return _instance(cls, values)

    return build


_PART_BUILDERS: dict[int, Callable[[Record], Any]] = {
    TEXT: _text_part,
    TOOL_CALL_PART: _tool_call_part,
    REASONING: _reasoning_part,
    IMAGE: _media_part(ImagePart, "image", "detail"),
    AUDIO: _media_part(AudioPart, "audio", None),
    VIDEO: _media_part(VideoPart, "video", None),
    FILE: _media_part(FilePart, "file", "filename"),
}
_USER_PARTS = frozenset(_PART_BUILDERS) - {TOOL_CALL_PART}
_AI_PARTS = frozenset(_PART_BUILDERS)


def _content(value: object, allowed: frozenset[int]) -> str | list[Any]:
    if type(value) is str:
        return value
    if type(value) is not list:
        _bad("content")
    builders = _PART_BUILDERS
    parts = []
    for record in value:
        if type(record) is not list or not record or record[0] not in allowed:
            _bad("content part")
        parts.append(builders[record[0]](record))
    return parts


# --- tool calls, usage -----------------------------------------------------


def _tool_call_record(call: ToolCall) -> Record:
    values = call.__dict__
    return [TOOL_CALL, values["id"], values["name"], values["args"]]


def _tool_call(record: Record) -> ToolCall:
    if (
        len(record) != 4
        or type(record[1]) is not str
        or type(record[2]) is not str
        or type(record[3]) is not dict
    ):
        _bad("ToolCall")
    values = {"id": record[1], "name": record[2], "args": record[3]}
    return _instance(ToolCall, values)  # type: ignore[no-any-return]


def _invalid_record(call: InvalidToolCall) -> Record:
    values = call.__dict__
    return [INVALID_TOOL_CALL, values["id"], values["name"], values["args"], values["error"]]


def _invalid(record: Record) -> InvalidToolCall:
    if (
        type(record) is not list
        or len(record) != 5
        or record[0] != INVALID_TOOL_CALL
        or type(record[1]) not in _OPTIONAL_STR
        or type(record[2]) not in _OPTIONAL_STR
        or type(record[3]) is not str
        or type(record[4]) is not str
    ):
        _bad("InvalidToolCall")
    values = {"id": record[1], "name": record[2], "args": record[3], "error": record[4]}
    return _instance(InvalidToolCall, values)  # type: ignore[no-any-return]


_usage_fields = itemgetter(
    "input_tokens", "output_tokens", "total_tokens", "cached_tokens", "reasoning_tokens"
)


def _usage_record(usage: Usage) -> Record:
    return [USAGE, *_usage_fields(usage.__dict__)]


def _usage(record: Record) -> Usage:
    if (
        type(record) is not list
        or len(record) != 6
        or record[0] != USAGE
        or type(record[1]) is not int
        or type(record[2]) is not int
        or type(record[3]) is not int
        or type(record[4]) not in _OPTIONAL_INT
        or type(record[5]) not in _OPTIONAL_INT
    ):
        _bad("Usage")
    values = {
        "input_tokens": record[1],
        "output_tokens": record[2],
        "total_tokens": record[3],
        "cached_tokens": record[4],
        "reasoning_tokens": record[5],
    }
    return _instance(Usage, values)  # type: ignore[no-any-return]


# --- messages --------------------------------------------------------------


def _plain_record(code: int) -> Callable[[Any], Record]:
    def record(message: Any) -> Record:
        values = message.__dict__
        content = values["content"]
        return [
            code,
            content if type(content) is str else _content_to_wire(content),
            values["id"],
            values["name"],
            values["metadata"],
        ]

    return record


def _ai_record(message: AIMessage) -> Record:
    values = message.__dict__
    content = values["content"]
    invalid = values["invalid_tool_calls"]
    usage = values["usage"]
    return [
        AI,
        content if type(content) is str else _content_to_wire(content),
        values["id"],
        values["name"],
        values["metadata"],
        [_invalid_record(call) for call in invalid] if invalid else [],
        None if usage is None else [USAGE, *_usage_fields(usage.__dict__)],
        values["response_metadata"],
    ]


def _tool_record(message: ToolMessage) -> Record:
    values = message.__dict__
    content = values["content"]
    return [
        TOOL,
        content if type(content) is str else _content_to_wire(content),
        values["id"],
        values["name"],
        values["metadata"],
        values["tool_call_id"],
        values["status"],
        values["artifact"],
    ]


def _remove_record(message: RemoveMessage) -> Record:
    return [REMOVE, message.__dict__["id"]]


def _plain_message(cls: type[BaseModel], kind: str) -> Callable[[Record], Any]:
    name = cls.__name__

    def build(record: Record) -> Any:
        if len(record) != 5:
            _bad(name)
        _, content, message_id, speaker, metadata = record
        if (
            type(message_id) not in _OPTIONAL_STR
            or type(speaker) not in _OPTIONAL_STR
            or type(metadata) is not dict
        ):
            _bad(name)
        values = {
            "type": kind,
            "content": content if type(content) is str else _content(content, _USER_PARTS),
            "id": message_id,
            "name": speaker,
            "metadata": metadata,
        }
        return _instance(cls, values)

    return build


def _ai_message(record: Record) -> AIMessage:
    if len(record) != 8:
        _bad("AIMessage")
    _, content, message_id, name, metadata, invalid, usage, response_metadata = record
    if (
        type(message_id) not in _OPTIONAL_STR
        or type(name) not in _OPTIONAL_STR
        or type(metadata) is not dict
        or type(invalid) is not list
        or type(response_metadata) is not dict
    ):
        _bad("AIMessage")
    values = {
        "type": "ai",
        "content": content if type(content) is str else _content(content, _AI_PARTS),
        "id": message_id,
        "name": name,
        "metadata": metadata,
        "invalid_tool_calls": [_invalid(call) for call in invalid] if invalid else invalid,
        "usage": None if usage is None else _usage(usage),
        "response_metadata": response_metadata,
    }
    return _instance(AIMessage, values)  # type: ignore[no-any-return]


def _tool_message(record: Record) -> ToolMessage:
    if len(record) != 8:
        _bad("ToolMessage")
    _, content, message_id, name, metadata, tool_call_id, status, artifact = record
    if (
        type(message_id) not in _OPTIONAL_STR
        or type(name) not in _OPTIONAL_STR
        or type(metadata) is not dict
        or type(tool_call_id) is not str
        or status not in _STATUSES
    ):
        _bad("ToolMessage")
    values = {
        "type": "tool",
        "content": content if type(content) is str else _content(content, _USER_PARTS),
        "id": message_id,
        "name": name,
        "metadata": metadata,
        "tool_call_id": tool_call_id,
        "status": status,
        "artifact": artifact,
    }
    return _instance(ToolMessage, values)  # type: ignore[no-any-return]


def _remove_message(record: Record) -> RemoveMessage:
    if len(record) != 2 or type(record[1]) is not str:
        _bad("RemoveMessage")
    return _instance(RemoveMessage, {"type": "remove", "id": record[1]})  # type: ignore[no-any-return]


_MESSAGE_RECORDS: dict[type, Callable[[Any], Record]] = {
    HumanMessage: _plain_record(HUMAN),
    AIMessage: _ai_record,
    ToolMessage: _tool_record,
    SystemMessage: _plain_record(SYSTEM),
    RemoveMessage: _remove_record,
}
_MESSAGE_BUILDERS: dict[int, Callable[[Record], Any]] = {
    HUMAN: _plain_message(HumanMessage, "human"),
    AI: _ai_message,
    TOOL: _tool_message,
    SYSTEM: _plain_message(SystemMessage, "system"),
    REMOVE: _remove_message,
}

MESSAGE_CLASSES = frozenset(_MESSAGE_RECORDS)
"""The classes `messages_value` takes."""


def messages_value(encoder: Encoder, messages: list[Any]) -> object:
    """A list (or MessageList) of built-in messages as one ext value; else the list itself.

    One value of records costs one Python call per message where a list
    packed item by item costs one per object; it loads as the same type.
    """
    data = encoder.pack_each(messages, _MESSAGE_RECORDS)
    if data is None:  # other values too: packed item by item, loads as a plain list
        return messages if type(messages) is list else list(messages)
    return ext(MESSAGES if type(messages) is list else MESSAGE_LIST, data)


def _decode_messages(decoder: Decoder, data: bytes) -> list[Any]:
    return decoder.decode_each(data, _MESSAGE_BUILDERS)


def _register(
    cls: type[BaseModel], code: int, record: Callable[[Any], Record], build: Callable[[Record], Any]
) -> None:
    if not cls.model_config.get("frozen"):  # _ALL_SET is shared by the instances
        raise AssertionError(f"{cls.__name__} must stay frozen for the codec's fast path")
    _ALL_SET[cls] = set(cls.model_fields)
    name = cls.__name__

    def encode(encoder: Encoder, value: Any) -> object:
        return ext(code, encoder.pack(record(value)))

    def decode(decoder: Decoder, data: bytes) -> object:
        fields = decoder.decode(data)
        if type(fields) is not list or not fields or fields[0] != code:
            _bad(name)
        return build(fields)

    ENCODERS[cls] = encode
    DECODERS[code] = decode


_CODES: dict[type[BaseModel], int] = {
    HumanMessage: HUMAN,
    AIMessage: AI,
    ToolMessage: TOOL,
    SystemMessage: SYSTEM,
    RemoveMessage: REMOVE,
    TextPart: TEXT,
    ToolCallPart: TOOL_CALL_PART,
    ReasoningPart: REASONING,
    ImagePart: IMAGE,
    AudioPart: AUDIO,
    VideoPart: VIDEO,
    FilePart: FILE,
    ToolCall: TOOL_CALL,
    InvalidToolCall: INVALID_TOOL_CALL,
    Usage: USAGE,
}
_RECORDS = {**_MESSAGE_RECORDS, **_PART_RECORDS}
_RECORDS.update(
    {ToolCall: _tool_call_record, InvalidToolCall: _invalid_record, Usage: _usage_record}
)
_BUILDERS = {**_MESSAGE_BUILDERS, **_PART_BUILDERS}
_BUILDERS.update({TOOL_CALL: _tool_call, INVALID_TOOL_CALL: _invalid, USAGE: _usage})
for _cls, _code in _CODES.items():
    _register(_cls, _code, _RECORDS[_cls], _BUILDERS[_code])
ENCODERS[MessageList] = messages_value
DECODERS[MESSAGES] = _decode_messages
DECODERS[MESSAGE_LIST] = lambda decoder, data: MessageList(_decode_messages(decoder, data))
