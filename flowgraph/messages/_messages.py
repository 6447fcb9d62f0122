"""The message classes: system, human, AI, tool, and the RemoveMessage marker.

Messages are frozen pydantic models discriminated by `type`. They are never
mutated after construction, so a message can be shared between a live state
and every checkpoint that holds it; "changing" one means building a new
message with the same id, which `add_messages` puts in its place.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

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
from flowgraph.messages._pretty import pretty_repr as layout_message
from flowgraph.messages._repr import message_repr_args

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
        if not _init_plain(self, data):
            super().__init__(**data)

    @field_validator("content", mode="before")
    @classmethod
    def _parts_from_strings(cls, value: object) -> object:
        return _coerce_part_items(value)

    @property
    def content_blocks(self) -> list[AIContentPart]:
        """Every part in order, tool calls and reasoning included (LangChain 1.x's name).

        A string content is one text part (none when empty). This is what
        `.text`, `.media` and an AI message's `.tool_calls` and `.reasoning` read.
        """
        content = self.__dict__["content"]
        if isinstance(content, str):
            return [TextPart(text=content)] if content else []
        return list(content)

    @property
    def text(self) -> str:
        """The text parts joined with no separator (reasoning is not text)."""
        content = self.__dict__["content"]
        if isinstance(content, str):
            return content
        return "".join(part.text for part in content if isinstance(part, TextPart))

    @property
    def media(self) -> list[MediaPart]:
        """Image, audio, video and file parts, in part order."""
        content = self.__dict__["content"]
        if isinstance(content, str):
            return []
        return [part for part in content if isinstance(part, _MEDIA_TYPES)]

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        # the fields LangChain's message shows, in its order (see _repr)
        yield from message_repr_args(self)

    def pretty_repr(self, html: bool = False) -> str:
        """The message laid out as LangChain prints it: a `==== Human Message ====` banner,
        the name, the content, and an AI message's tool calls (`html`: a bold title)."""
        return layout_message(self, html=html)

    def pretty_print(self) -> None:
        """Print `pretty_repr()`: a transcript that reads as a LangChain tutorial's does."""
        print(self.pretty_repr())


class SystemMessage(BaseMessage):
    """Instructions for the model; a conversation keeps at most one, first."""

    type: Literal["system"] = "system"

    if TYPE_CHECKING:  # what checkers see; at run time BaseMessage.__init__ (no extra call)

        def __init__(
            self,
            content: str | Sequence[ContentPart | str | Mapping[str, Any]] = "",
            *,
            id: str | None = None,
            name: str | None = None,
            metadata: dict[str, Any] | None = None,
        ) -> None: ...


class HumanMessage(BaseMessage):
    """What a person said (also `UserMessage`)."""

    type: Literal["human"] = "human"

    if TYPE_CHECKING:  # what checkers see; at run time BaseMessage.__init__ (no extra call)

        def __init__(
            self,
            content: str | Sequence[ContentPart | str | Mapping[str, Any]] = "",
            *,
            id: str | None = None,
            name: str | None = None,
            metadata: dict[str, Any] | None = None,
        ) -> None: ...


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
    call = _new(ToolCall)
    _set_dict(call, {"id": part.id, "name": part.name, "args": part.args})
    _set_fields_set(call, set(_TOOL_CALL_FIELDS))  # a set of its own, as validation makes
    _set_extra(call, None)
    _set_private(call, None)
    return call


_TOOL_CALL_FIELDS = frozenset({"id", "name", "args"})
_new = object.__new__
# the slots of every pydantic model, set through their descriptors: a bound setter call
# costs about half of `object.__setattr__`'s name lookup, and messages are built often
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


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

    if TYPE_CHECKING:  # what checkers see; at run time BaseMessage.__init__ (no extra call)

        def __init__(
            self,
            content: str | Sequence[AIContentPart | str | Mapping[str, Any]] = "",
            *,
            tool_calls: Sequence[ToolCall | ToolCallPart | Mapping[str, Any]] | None = None,
            invalid_tool_calls: Sequence[InvalidToolCall | Mapping[str, Any]] | None = None,
            usage: Usage | Mapping[str, Any] | None = None,
            response_metadata: dict[str, Any] | None = None,
            id: str | None = None,
            name: str | None = None,
            metadata: dict[str, Any] | None = None,
        ) -> None: ...

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
        content = self.__dict__["content"]
        if isinstance(content, str):
            return []
        return [_tool_call(p) for p in content if type(p) is ToolCallPart]

    @property
    def reasoning(self) -> str:
        """The reasoning parts joined with no separator."""
        content = self.__dict__["content"]
        if isinstance(content, str):
            return ""
        return "".join(p.text for p in content if isinstance(p, ReasoningPart))

    @property
    def has_tool_calls(self) -> bool:
        """True when the model asked for at least one tool (what routing follows)."""
        content = self.__dict__["content"]
        if isinstance(content, str):
            return False
        for part in content:  # a loop, not any(<generator>): routing asks this every step
            if isinstance(part, ToolCallPart):
                return True
        return False


def _content_view(message: AIMessage) -> str | list[AIContentPart]:
    """`AIMessage.content` as LangChain reads it, over the stored parts.

    Text alone, or text and tool calls only, read as the text (`""` when
    there is none): `AIMessage("", tool_calls=[...]).content == ""`. Parts
    with media or reasoning, or text parts given as a list, read as that
    list. The stored field keeps every part in provider order (what
    `content_blocks`, equality, dumps and checkpoints see), so messages
    written before this reading existed load and read the same.
    """
    content: str | list[AIContentPart] = message.__dict__["content"]
    if isinstance(content, str):
        return content
    calls = False
    for part in content:
        kind = type(part)
        if kind is ToolCallPart:
            calls = True
        elif kind is not TextPart:
            return content
    if not calls:
        return content
    return "".join(part.text for part in content if isinstance(part, TextPart))


# A data descriptor on the class reads before the instance's stored field of the same name.
type.__setattr__(AIMessage, "content", property(_content_view, doc=_content_view.__doc__))


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

    if TYPE_CHECKING:  # what checkers see; at run time BaseMessage.__init__ (no extra call)

        def __init__(
            self,
            content: str | Sequence[ContentPart | str | Mapping[str, Any]] = "",
            *,
            tool_call_id: str,
            status: Literal["success", "error"] = "success",
            artifact: Any = None,
            id: str | None = None,
            name: str | None = None,
            metadata: dict[str, Any] | None = None,
        ) -> None: ...


class RemoveMessage(BaseModel):
    """An instruction to `add_messages`: delete the message with this id.

    `RemoveMessage(REMOVE_ALL_MESSAGES)` clears the list.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    type: Literal["remove"] = "remove"
    id: str

    @property
    def text(self) -> str:
        """Always empty: a marker has no text (so any message in a history has `.text`)."""
        return ""

    @property
    def content(self) -> str:
        """Always empty, as LangChain's RemoveMessage."""
        return ""

    @property
    def content_blocks(self) -> list[AIContentPart]:
        """Always empty: a marker has no parts."""
        return []

    @property
    def name(self) -> str | None:
        """Always None: a marker has no speaker."""
        return None

    def __init__(self, id: str | None = None, /, **data: Any) -> None:
        if id is not None:
            data["id"] = id
        super().__init__(**data)

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        yield from message_repr_args(self)


# -- building messages from plain arguments without the validator ----------------------
#
# Nodes build messages all the time, mostly from plain strings (`AIMessage("done")`,
# `ToolMessage(text, tool_call_id=...)`, tool calls as dicts). For exactly those
# arguments the fields are set here as the validator would set them (same values,
# same defaults, same `model_fields_set`); anything else (other keys or types, a
# subclass, an invalid value) takes the validator, which also reports the errors.

_STRING_FIELDS = frozenset({"content", "id", "name", "tool_call_id", "status"})
"""Arguments taken as given when they are `str` (`id` and `name` also None)."""
_NULLABLE = frozenset({"id", "name"})
_STATUSES = frozenset({"success", "error"})
_TOOL_CALL_KEYS = frozenset({"id", "name", "args", "type"})
_TOOL_CALL_FIELDS_SET = frozenset({"type", "id", "name"})
_STR = frozenset({str})


class _Shape:
    """One message class's fields in order: the plain defaults and the factory-made ones."""

    __slots__ = ("factories", "required", "template")

    def __init__(self, cls: type[BaseModel]) -> None:
        self.template: dict[str, Any] = {}
        self.factories: list[tuple[str, Any]] = []
        required = []
        for name, info in cls.model_fields.items():
            self.template[name] = None if info.is_required() else info.default
            if info.default_factory is not None:
                self.factories.append((name, info.default_factory))
            elif info.is_required():
                required.append(name)
        self.required = frozenset(required)


def _init_plain(message: BaseModel, data: dict[str, Any]) -> bool:
    """Set `message`'s fields from plain arguments, as validation would; False if not plain."""
    cls = type(message)
    shape = _SHAPES.get(cls)
    if shape is None:
        return False  # a user's subclass may add fields and validators: always validate
    calls = data.pop("tool_calls", None) if cls is AIMessage else None
    for key, value in data.items():
        if type(value) is not str:
            if value is not None or key not in _NULLABLE:
                break
        elif key not in _STRING_FIELDS or (key == "status" and value not in _STATUSES):
            break
    else:
        if shape.required <= data.keys():
            fields_set = set(data)
            fields = shape.template.copy()
            for name, factory in shape.factories:
                fields[name] = factory()
            fields.update(data)
            if not calls or _put_tool_calls(fields, calls):
                if calls:
                    fields_set.add("content")
                _set_dict(message, fields)
                _set_fields_set(message, fields_set)
                _set_extra(message, None)
                _set_private(message, None)
                return True
    if calls is not None:
        data["tool_calls"] = calls  # back for the validator
    return False


def _put_tool_calls(fields: dict[str, Any], calls: object) -> bool:
    """Content followed by the calls as parts, as `_append_tool_calls` makes it; or False.

    Takes dicts of plain values and `ToolCall`s (a call copied from another message).
    """
    if type(calls) is not list:
        return False
    parts: list[Any] = []
    call_id: object
    name: object
    args: object
    for call in calls:
        if type(call) is ToolCall:  # a call taken from another message: validated already
            call_id, name, args = call.id, call.name, call.args
        elif type(call) is not dict or not _TOOL_CALL_KEYS.issuperset(call):
            return False
        else:
            call_id, name, args = call.get("id"), call.get("name"), call.get("args", _NO_ARGS)
        if type(call_id) is not str or type(name) is not str:
            return False
        part = _new(ToolCallPart)
        if args is _NO_ARGS:
            _set_dict(part, {"type": "tool_call", "id": call_id, "name": name, "args": {}})
            _set_fields_set(part, set(_TOOL_CALL_FIELDS_SET))
        elif type(args) is dict and _STR.issuperset(map(type, args)):
            fields_of_part = {"type": "tool_call", "id": call_id, "name": name, "args": dict(args)}
            _set_dict(part, fields_of_part)
            _set_fields_set(part, {*_TOOL_CALL_FIELDS_SET, "args"})
        else:
            return False
        _set_extra(part, None)
        _set_private(part, None)
        parts.append(part)
    content = fields["content"]
    fields["content"] = [TextPart(text=content), *parts] if content else parts
    return True


_NO_ARGS: Any = object()


UserMessage = HumanMessage
AssistantMessage = AIMessage
ToolResponseMessage = ToolMessage

AnyMessage = Annotated[
    Union[SystemMessage, HumanMessage, AIMessage, ToolMessage, RemoveMessage],  # noqa: UP007 - a runtime union pydantic discriminates
    Field(discriminator="type"),
]
"""Any message, validated by its `type` field."""

_SHAPES: dict[type[BaseModel], _Shape] = {
    cls: _Shape(cls) for cls in (SystemMessage, HumanMessage, AIMessage, ToolMessage)
}

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
