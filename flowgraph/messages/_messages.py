"""The message classes: system, human, AI, tool, and the RemoveMessage marker.

Messages are frozen pydantic models discriminated by `type`. They are never
mutated after construction, so a message can be shared between a live state
and every checkpoint that holds it; "changing" one means building a new
message with the same id, which `add_messages` puts in its place.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    field_validator,
    model_validator,
)

from flowgraph.messages._parts import (
    AIContentPart,
    AudioPart,
    ContentPart,
    FilePart,
    ImagePart,
    MediaPart,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolCallPart,
    VideoPart,
)

__all__ = [
    "REMOVE_ALL_MESSAGES",
    "AIMessage",
    "AnyMessage",
    "AssistantMessage",
    "BaseMessage",
    "HumanMessage",
    "InvalidToolCall",
    "RemoveMessage",
    "SystemMessage",
    "ToolMessage",
    "ToolResponseMessage",
    "Usage",
    "UserMessage",
]

REMOVE_ALL_MESSAGES = "__remove_all__"
"""Give this id to a RemoveMessage to clear the whole message list."""

_MEDIA_TYPES = (ImagePart, AudioPart, VideoPart, FilePart)


def _coerce_part_items(value: object) -> object:
    """Let a content list hold bare strings, as most callers write it."""
    if isinstance(value, list) and any(isinstance(item, str) for item in value):
        return [TextPart(text=item) if isinstance(item, str) else item for item in value]
    return value


class BaseMessage(BaseModel):
    """What every chat message has: content, an optional id, name and metadata."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    type: str
    content: str | list[ContentPart] = ""
    """Text, or an ordered list of parts (text, image, audio, video, file, reasoning)."""
    id: str | None = None
    """Stable identity: `add_messages` replaces a message with the same id in place."""
    name: str | None = None
    """The speaker, for several humans or agents in one conversation."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Your own data; travels with the message and its checkpoints, never to a model."""

    def __init__(self, content: object = None, /, **data: Any) -> None:
        if content is not None:
            data["content"] = content
        super().__init__(**data)

    @field_validator("content", mode="before")
    @classmethod
    def _parts_from_strings(cls, value: object) -> object:
        return _coerce_part_items(value)

    @property
    def text(self) -> str:
        """The text parts joined with no separator (reasoning is not text)."""
        content = self.content
        if isinstance(content, str):
            return content
        return "".join(part.text for part in content if isinstance(part, TextPart))

    @property
    def media(self) -> list[MediaPart]:
        """Image, audio, video and file parts, in part order."""
        content = self.content
        if isinstance(content, str):
            return []
        return [part for part in content if isinstance(part, _MEDIA_TYPES)]


class SystemMessage(BaseMessage):
    """Instructions for the model; a conversation keeps at most one, first."""

    type: Literal["system"] = "system"


class HumanMessage(BaseMessage):
    """What a person said (also `UserMessage`)."""

    type: Literal["human"] = "human"


class Usage(BaseModel):
    """Tokens one model call consumed; adds up with `+` across calls."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int | None = None
    """Input tokens served from the provider's prompt cache, where reported."""
    reasoning_tokens: int | None = None
    """Output tokens spent on reasoning, where reported."""

    @model_validator(mode="before")
    @classmethod
    def _fill_total(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("total_tokens"):
            data = {
                **data,
                "total_tokens": data.get("input_tokens", 0) + data.get("output_tokens", 0),
            }
        return data

    def __add__(self, other: Usage) -> Usage:
        def both(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cached_tokens=both(self.cached_tokens, other.cached_tokens),
            reasoning_tokens=both(self.reasoning_tokens, other.reasoning_tokens),
        )


class InvalidToolCall(BaseModel):
    """A tool call whose arguments did not parse; `args` keeps the raw text."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str | None = None
    name: str | None = None
    args: str = ""
    error: str = ""


def _tool_call_parts(calls: object) -> list[dict[str, Any]]:
    """Tool calls as part dicts, validated once with the rest of the content."""
    if not isinstance(calls, (list, tuple)):
        raise ValueError("tool_calls must be a list of ToolCall or dicts with id, name, args")
    parts = []
    for call in calls:
        if isinstance(call, (ToolCall, ToolCallPart)):
            parts.append({"type": "tool_call", "id": call.id, "name": call.name, "args": call.args})
        elif isinstance(call, dict):
            parts.append({**call, "type": "tool_call"})
        else:
            raise ValueError(f"a tool call must be a ToolCall or a dict, not {type(call).__name__}")
    return parts


def _tool_call(part: ToolCallPart) -> ToolCall:
    """The ToolCall view of a part, built without re-validating what the part holds."""
    call = object.__new__(ToolCall)
    object.__setattr__(call, "__dict__", {"id": part.id, "name": part.name, "args": part.args})
    object.__setattr__(call, "__pydantic_fields_set__", _TOOL_CALL_FIELDS)
    object.__setattr__(call, "__pydantic_extra__", None)
    object.__setattr__(call, "__pydantic_private__", None)
    return call


_TOOL_CALL_FIELDS = frozenset({"id", "name", "args"})


class AIMessage(BaseMessage):
    """A model's reply (also `AssistantMessage`).

    Its parts keep the order the provider produced them in: reasoning, tool
    calls, text and media may interleave. `.text`, `.reasoning`,
    `.tool_calls` and `.media` are views over the parts in that order.
    `AIMessage("text", tool_calls=[...])` builds text first, then the calls.
    """

    type: Literal["ai"] = "ai"
    content: str | list[AIContentPart] = ""  # type: ignore[assignment]  # frozen: widening is safe
    invalid_tool_calls: list[InvalidToolCall] = Field(default_factory=list)
    """Calls the model made whose arguments were not valid JSON."""
    usage: Usage | None = None
    response_metadata: dict[str, Any] = Field(default_factory=dict)
    """What the provider said about the reply: finish_reason, model_name, id, ..."""

    @model_validator(mode="before")
    @classmethod
    def _append_tool_calls(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "tool_calls" not in data:
            return data
        data = dict(data)
        calls = _tool_call_parts(data.pop("tool_calls") or [])
        if not calls:
            return data
        content = _coerce_part_items(data.get("content", ""))
        if isinstance(content, str):
            content = [TextPart(text=content)] if content else []
        elif not isinstance(content, list):
            return data  # let field validation report the wrong content type
        present = {
            p.id if isinstance(p, ToolCallPart) else p.get("id")
            for p in content
            if isinstance(p, ToolCallPart) or (isinstance(p, dict) and p.get("type") == "tool_call")
        }
        data["content"] = [*content, *(c for c in calls if c["id"] not in present)]
        return data

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls among the parts, in part order."""
        content = self.content
        if isinstance(content, str):
            return []
        return [_tool_call(p) for p in content if type(p) is ToolCallPart]

    @property
    def reasoning(self) -> str:
        """The reasoning parts joined with no separator."""
        content = self.content
        if isinstance(content, str):
            return ""
        return "".join(p.text for p in content if isinstance(p, ReasoningPart))

    @property
    def has_tool_calls(self) -> bool:
        """True when the model asked for at least one tool (what routing follows)."""
        content = self.content
        return not isinstance(content, str) and any(isinstance(p, ToolCallPart) for p in content)


class ToolMessage(BaseMessage):
    """The result of one tool call (also `ToolResponseMessage`).

    `artifact` holds the full output (a dataframe, a file) for the
    application; only `content` is shown to the model.
    """

    type: Literal["tool"] = "tool"
    tool_call_id: str
    """The id of the AIMessage's tool call this answers."""
    status: Literal["success", "error"] = "success"
    artifact: Any = None


class RemoveMessage(BaseModel):
    """An instruction to `add_messages`: delete the message with this id.

    `RemoveMessage(REMOVE_ALL_MESSAGES)` clears the list.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    type: Literal["remove"] = "remove"
    id: str

    def __init__(self, id: str | None = None, /, **data: Any) -> None:
        if id is not None:
            data["id"] = id
        super().__init__(**data)


UserMessage = HumanMessage
AssistantMessage = AIMessage
ToolResponseMessage = ToolMessage

AnyMessage = Annotated[
    Union[SystemMessage, HumanMessage, AIMessage, ToolMessage, RemoveMessage],  # noqa: UP007 - a runtime union pydantic discriminates
    Field(discriminator="type"),
]
"""Any message, validated by its `type` field."""

MESSAGE_TYPES: dict[str, type[BaseModel]] = {
    "system": SystemMessage,
    "human": HumanMessage,
    "ai": AIMessage,
    "tool": ToolMessage,
    "remove": RemoveMessage,
}

_DEFERRED = ConfigDict(defer_build=True)
"""Validators are built on first use, not at import: a process that only loads a
checkpoint (built without validation) never pays for them."""

message_list_adapter: TypeAdapter[list[AnyMessage]] = TypeAdapter(
    list[AnyMessage], config=_DEFERRED
)
message_adapter: TypeAdapter[AnyMessage] = TypeAdapter(AnyMessage, config=_DEFERRED)
