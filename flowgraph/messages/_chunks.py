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
from collections.abc import Iterable
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
    ToolCallPart,
    VideoPart,
)

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
    content: list[ChunkPart] = Field(default_factory=list)
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
    def text(self) -> str:
        """The text fragments of this chunk joined."""
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    @property
    def reasoning(self) -> str:
        """The reasoning fragments of this chunk joined."""
        return "".join(p.text for p in self.content if isinstance(p, ReasoningPart))

    @property
    def tool_call_chunks(self) -> list[ToolCallChunk]:
        """The partial tool calls in this chunk, in part order."""
        return [p for p in self.content if isinstance(p, ToolCallChunk)]

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
        content = message.content
        if isinstance(content, str):
            if content:
                parts.append(TextPart(text=content))
        else:
            for part in content:
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
        for part in chunk.content:
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
