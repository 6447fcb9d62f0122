"""Streamed pieces of an AI reply: `AIMessageChunk` and its partial tool calls.

A stream is a sequence of chunks; adding them (`a + b`, `sum(chunks)`, or
`merge_chunks` in linear time) gives one chunk holding the whole reply, and
`.to_message()` turns that into the `AIMessage` a non-streaming call returns.
Chunks stay in the order the provider produced them. Merging rules, part by
part:

- adjacent text fragments join into one `TextPart`;
- adjacent reasoning fragments join into one `ReasoningPart` until a fragment
  carries a `signature` (the provider's end-of-block marker), so two
  thinking blocks stay two parts;
- `ToolCallChunk`s with the same `index` join wherever they arrive: the first
  `id` and `name` win, `args` fragments are concatenated; the call keeps the
  place where its first fragment appeared;
- media parts are appended;
- `usage` adds up, `response_metadata` and `metadata` are updated key by key
  (later chunks win), the first non-empty `id` and `name` win.

Splitting a reply into chunks anywhere and merging them gives the same
message; that is what lets `sum(model.stream(...)).to_message()` equal
`model.invoke(...)`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from flowgraph.messages._from_openai import parse_arguments
from flowgraph.messages._messages import AIMessage, InvalidToolCall, Usage
from flowgraph.messages._parts import (
    AudioPart,
    FilePart,
    ImagePart,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolCallPart,
    VideoPart,
)
from flowgraph.messages._repr import message_repr_args

__all__ = ["AIMessageChunk", "ChunkPart", "ToolCallChunk", "merge_chunks"]


class ToolCallChunk(BaseModel):
    """A fragment of tool call number `index`: `args` is a piece of its JSON arguments."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    type: Literal["tool_call_chunk"] = "tool_call_chunk"
    index: int
    """Which call of the reply this fragment belongs to (the provider's own numbering)."""
    id: str | None = None
    name: str | None = None
    args: str = ""
    """A piece of the arguments' JSON text; the pieces concatenate to the whole."""


ChunkPart = Annotated[
    TextPart | ReasoningPart | ImagePart | AudioPart | VideoPart | FilePart | ToolCallChunk,
    Field(discriminator="type"),
]
"""What a chunk's content holds: AI parts, with tool calls still in fragments."""


class AIMessageChunk(BaseModel):
    """A piece of a streamed AI reply; chunks add up with `+` into the whole reply.

    `AIMessageChunk("Hel")` is a text fragment. `.text`, `.reasoning` and
    `.tool_call_chunks` view this chunk's own parts; `.to_message()` builds
    the `AIMessage` (arguments parsed; unparsable ones become
    `InvalidToolCall`s).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    type: Literal["ai_chunk"] = "ai_chunk"
    content: str | list[ChunkPart] = Field(default_factory=list)
    """Stored as parts (a string becomes a text part); reads as LangChain's (`content_blocks`)."""
    id: str | None = None
    """The reply's id; every chunk of one reply carries the same one."""
    name: str | None = None
    usage: Usage | None = None
    response_metadata: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, content: object = None, /, **data: Any) -> None:
        if content is not None:
            data["content"] = content
        super().__init__(**data)

    @field_validator("content", mode="before")
    @classmethod
    def _text_to_parts(cls, value: object) -> object:
        if isinstance(value, str):
            return [TextPart(text=value)] if value else []
        return value

    @property
    def content_blocks(self) -> list[ChunkPart]:
        """Every part of this chunk in order, tool call fragments included."""
        parts: list[ChunkPart] = self.__dict__["content"]
        return list(parts)

    @property
    def text(self) -> str:
        """The text fragments of this chunk joined."""
        return "".join(p.text for p in self.__dict__["content"] if isinstance(p, TextPart))

    @property
    def reasoning(self) -> str:
        """The reasoning fragments of this chunk joined."""
        return "".join(p.text for p in self.__dict__["content"] if isinstance(p, ReasoningPart))

    @property
    def tool_call_chunks(self) -> list[ToolCallChunk]:
        """The partial tool calls in this chunk, in part order."""
        return [p for p in self.__dict__["content"] if isinstance(p, ToolCallChunk)]

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The calls parsed so far, as LangChain's chunks have them.

        Arguments still streaming are read as far as they go (`'{"q": "ca'` gives
        `{"q": "ca"}`); a fragment whose arguments cannot be read that way is
        left out. A missing id or name reads as `""`.
        """
        calls = []
        for part in self.__dict__["content"]:
            if isinstance(part, ToolCallChunk):
                args = partial_json_object(part.args)
                if args is not None:
                    calls.append(ToolCall(id=part.id or "", name=part.name or "", args=args))
        return calls

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        # the fields LangChain's chunk shows, in its order (see _repr); a fragment whose
        # arguments do not read as an object so far shows as an invalid call, as there
        for key, value in message_repr_args(self):
            if key == "invalid_tool_calls":
                value = [
                    {
                        "name": p.name,
                        "args": p.args,
                        "id": p.id,
                        "error": None,
                        "type": "invalid_tool_call",
                    }
                    for p in self.tool_call_chunks
                    if partial_json_object(p.args) is None
                ]
            yield key, value

    def __add__(self, other: AIMessageChunk) -> AIMessageChunk:
        if not isinstance(other, AIMessageChunk):
            return NotImplemented
        return merge_chunks((self, other))

    def __radd__(self, other: object) -> AIMessageChunk:
        # sum(chunks) starts from 0.
        if other == 0:
            return self
        return NotImplemented

    def to_message(self) -> AIMessage:
        """The AIMessage this (merged) chunk describes.

        Tool call arguments are parsed here: empty arguments are `{}`, a JSON
        object becomes a `ToolCallPart`, anything else (or a call without id
        or name) an `InvalidToolCall` keeping the raw text. Content that is
        only text becomes a plain string, as a non-streaming reply's does.
        """
        builder = _Builder()
        builder.add(self)
        return builder.to_message()

    @classmethod
    def from_message(cls, message: AIMessage) -> AIMessageChunk:
        """One chunk holding the whole of `message` (tool calls numbered in order)."""
        parts: list[Any] = []
        index = 0
        for part in message.content_blocks:
            if isinstance(part, ToolCallPart):
                parts.append(_call_chunk(index, part.id, part.name, part.args))
                index += 1
            else:
                parts.append(part)
        for call in message.invalid_tool_calls:
            parts.append(ToolCallChunk(index=index, id=call.id, name=call.name, args=call.args))
            index += 1
        return cls(
            content=parts,
            id=message.id,
            name=message.name,
            usage=message.usage,
            response_metadata=dict(message.response_metadata),
            metadata=dict(message.metadata),
        )


def _call_chunk(index: int, call_id: str, name: str, args: dict[str, Any]) -> ToolCallChunk:
    text = json.dumps(args, ensure_ascii=False, separators=(",", ":")) if args else ""
    return ToolCallChunk(index=index, id=call_id, name=name, args=text)


def merge_chunks(chunks: Iterable[AIMessageChunk]) -> AIMessageChunk:
    """All `chunks` merged into one, in time linear in their total size."""
    builder = _Builder()
    for chunk in chunks:
        builder.add(chunk)
    return builder.to_chunk()


class _Builder:
    """Mutable accumulation of chunks: text kept as lists of pieces, joined once at the end."""

    __slots__ = ("id", "metadata", "name", "parts", "response_metadata", "tools", "usage")

    def __init__(self) -> None:
        self.parts: list[list[Any]] = []
        """Each entry: ["text", pieces] | ["reasoning", pieces, signature pieces]
        | ["tool", index, id, name, pieces] | ["media", part]."""
        self.tools: dict[int, list[Any]] = {}
        self.id: str | None = None
        self.name: str | None = None
        self.usage: Usage | None = None
        self.response_metadata: dict[str, Any] = {}
        self.metadata: dict[str, Any] = {}

    def add(self, chunk: AIMessageChunk) -> None:
        if self.id is None and chunk.id:
            self.id = chunk.id
        if self.name is None and chunk.name:
            self.name = chunk.name
        if chunk.usage is not None:
            self.usage = chunk.usage if self.usage is None else self.usage + chunk.usage
        if chunk.response_metadata:
            self.response_metadata.update(chunk.response_metadata)
        if chunk.metadata:
            self.metadata.update(chunk.metadata)
        parts = self.parts
        for part in chunk.__dict__["content"]:
            last = parts[-1] if parts else None
            if isinstance(part, TextPart):
                if last is not None and last[0] == "text":
                    last[1].append(part.text)
                else:
                    parts.append(["text", [part.text]])
            elif isinstance(part, ReasoningPart):
                if last is not None and last[0] == "reasoning" and not last[2]:
                    last[1].append(part.text)
                else:
                    last = ["reasoning", [part.text], []]
                    parts.append(last)
                if part.signature:
                    last[2].append(part.signature)
            elif isinstance(part, ToolCallChunk):
                entry = self.tools.get(part.index)
                if entry is None:
                    entry = ["tool", part.index, part.id, part.name, [part.args]]
                    self.tools[part.index] = entry
                    parts.append(entry)
                else:
                    if entry[2] is None and part.id:
                        entry[2] = part.id
                    if entry[3] is None and part.name:
                        entry[3] = part.name
                    entry[4].append(part.args)
            else:
                parts.append(["media", part])

    def _parts(self) -> list[Any]:
        out: list[Any] = []
        for entry in self.parts:
            kind = entry[0]
            if kind == "text":
                out.append(TextPart(text="".join(entry[1])))
            elif kind == "reasoning":
                signature = "".join(entry[2]) or None
                out.append(ReasoningPart(text="".join(entry[1]), signature=signature))
            elif kind == "tool":
                out.append(
                    ToolCallChunk(
                        index=entry[1], id=entry[2], name=entry[3], args="".join(entry[4])
                    )
                )
            else:
                out.append(entry[1])
        return out

    def to_chunk(self) -> AIMessageChunk:
        return AIMessageChunk(
            content=self._parts(),
            id=self.id,
            name=self.name,
            usage=self.usage,
            response_metadata=self.response_metadata,
            metadata=self.metadata,
        )

    def to_message(self) -> AIMessage:
        parts: list[Any] = []
        invalid: list[InvalidToolCall] = []
        for part in self._parts():
            if isinstance(part, ToolCallChunk):
                call = _parse_call(part)
                if isinstance(call, InvalidToolCall):
                    invalid.append(call)
                else:
                    parts.append(call)
            elif not (isinstance(part, TextPart) and not part.text):
                parts.append(part)
        content: str | list[Any]
        if all(isinstance(p, TextPart) for p in parts):
            content = "".join(p.text for p in parts)
        else:
            content = parts
        return AIMessage(
            content=content,
            id=self.id,
            name=self.name,
            usage=self.usage,
            response_metadata=self.response_metadata,
            metadata=self.metadata,
            invalid_tool_calls=invalid,
        )


def _parse_call(part: ToolCallChunk) -> ToolCallPart | InvalidToolCall:
    """A finished call: parsed arguments, or an InvalidToolCall saying why not."""
    args, error = parse_arguments(part.args)
    if error is None and part.id and part.name:
        return ToolCallPart(id=part.id, name=part.name, args=args)
    if error is None:
        error = "the tool call has no id" if not part.id else "the tool call names no function"
    return InvalidToolCall(id=part.id, name=part.name, args=part.args, error=error)


def _chunk_content_view(chunk: AIMessageChunk) -> str | list[ChunkPart]:
    """`AIMessageChunk.content` as LangChain reads it: text fragments (and tool call
    fragments) read as the text, so `print(chunk.content, end="")` streams text;
    a chunk with reasoning or media reads as its list of parts."""
    parts: list[ChunkPart] = chunk.__dict__["content"]
    for part in parts:
        kind = type(part)
        if kind is not TextPart and kind is not ToolCallChunk:
            return parts
    return "".join(part.text for part in parts if isinstance(part, TextPart))


# A data descriptor on the class reads before the instance's stored field of the same name.
type.__setattr__(
    AIMessageChunk, "content", property(_chunk_content_view, doc=_chunk_content_view.__doc__)
)


def partial_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object `text` begins, closed where it stops; None if it is not one.

    What a call's arguments say so far while they stream: an open string,
    array or object is closed; a value cut mid-word, or a key without its
    value, is dropped back to the last `,`, `{` or `[`.
    """
    if not text.strip():
        return {}
    for _ in range(8):  # each round drops one unfinished member
        scanned = _scan(text)
        if scanned is None:
            return None
        closers, in_string, escaped, cut = scanned
        candidate = text[:-1] if escaped else text
        if in_string:
            candidate += '"'
        candidate = candidate.rstrip()
        if candidate.endswith((",", ":")):
            candidate = candidate[:-1]
        try:
            value = json.loads(candidate + closers)
        except json.JSONDecodeError:
            if cut < 0 or cut >= len(text):
                return None
            text = text[:cut]
            continue
        return value if isinstance(value, dict) else None
    return None


def _scan(text: str) -> tuple[str, bool, bool, int] | None:
    """(closing brackets, ends in a string, ends after a backslash, where to cut back)."""
    closers: list[str] = []
    in_string = escaped = False
    cut = -1
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            closers.append("}" if char == "{" else "]")
            cut = index + 1
        elif char in "}]":
            if not closers:
                return None
            closers.pop()
        elif char == ",":
            cut = index
    return "".join(reversed(closers)), in_string, escaped, cut
