"""Content parts: the pieces a message's content is made of.

Each part is a frozen pydantic model discriminated by `type`, so a list of
parts validates from plain dicts and round-trips through JSON and msgpack.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "AIContentPart",
    "AudioPart",
    "ContentPart",
    "FilePart",
    "ImagePart",
    "MediaPart",
    "ReasoningPart",
    "TextPart",
    "ToolCall",
    "ToolCallPart",
    "VideoPart",
]


class _Part(BaseModel):
    """A part also reads as LangChain's content block, a dict: `part["type"]`,
    `part["text"]`, `part.get("name")`, `"args" in part`, `keys()`; the keys are its fields
    that are set, under LangChain's names where they differ (`_KEYS`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    _KEYS: ClassVar[dict[str, str]] = {}
    """LangChain's key -> this part's field, where the two names differ."""

    def _field(self, key: str) -> str | None:
        name = self._KEYS.get(key, key)
        if name not in type(self).model_fields or (name == key and key in self._KEYS.values()):
            return None  # not a field, or a field LangChain names otherwise
        return name if getattr(self, name) is not None else None

    def __getitem__(self, key: str) -> Any:
        name = self._field(key)
        if name is None:
            raise KeyError(key)
        return getattr(self, name)

    def get(self, key: str, default: Any = None) -> Any:
        """`block.get("text")`: the value under a LangChain content-block key, or `default`."""
        name = self._field(key)
        return default if name is None else getattr(self, name)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._field(key) is not None

    def keys(self) -> list[str]:
        """The keys this part reads under (so `dict(part)` is LangChain's block)."""
        fields = {field: key for key, field in self._KEYS.items()}
        return [
            fields.get(name, name)
            for name in type(self).model_fields
            if getattr(self, name) is not None
        ]


class TextPart(_Part):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str

    def __init__(self, text: str | None = None, /, **data: Any) -> None:
        if text is not None:
            data["text"] = text
        super().__init__(**data)


class ReasoningPart(_Part):
    """A model's visible reasoning ("thinking"), kept apart from the answer text.

    `signature` is the provider's opaque proof (Anthropic) that must be sent
    back unchanged on the next turn.
    """

    type: Literal["reasoning"] = "reasoning"
    text: str

    _KEYS: ClassVar[dict[str, str]] = {"reasoning": "text"}
    signature: str | None = None

    def __init__(self, text: str | None = None, /, **data: Any) -> None:
        if text is not None:
            data["text"] = text
        super().__init__(**data)


class _Media(_Part):
    """Media given by URL or inline as base64 text (bytes are encoded on the way in)."""

    url: str | None = None
    """Where the media lives (https:, file:, or a data: URL)."""
    data: str | None = None
    """The media inline, as base64 text."""
    mime_type: str | None = None
    """e.g. image/png, audio/wav, application/pdf; required with `data`."""

    _KEYS: ClassVar[dict[str, str]] = {"base64": "data"}

    @field_validator("data", mode="before")
    @classmethod
    def _encode_bytes(cls, value: object) -> object:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return base64.b64encode(bytes(value)).decode("ascii")
        if isinstance(value, str):
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ValueError(
                    "data must be bytes or base64 text; for a link use url= instead"
                ) from exc
        return value

    @model_validator(mode="after")
    def _url_xor_data(self) -> _Media:
        if (self.url is None) == (self.data is None):
            raise ValueError(
                f"{type(self).__name__} needs exactly one of url= or data=, "
                f"got {'both' if self.url is not None else 'neither'}"
            )
        return self

    def as_bytes(self) -> bytes:
        """The inline data decoded; a URL part has none to give."""
        if self.data is None:
            raise ValueError(f"{type(self).__name__} refers to {self.url!r}; it holds no data")
        return base64.b64decode(self.data)


class ImagePart(_Media):
    """An image; `detail` is the resolution hint some providers accept."""

    type: Literal["image"] = "image"
    detail: Literal["auto", "low", "high"] | None = None


class AudioPart(_Media):
    """A sound clip."""

    type: Literal["audio"] = "audio"


class VideoPart(_Media):
    """A video clip."""

    type: Literal["video"] = "video"


class FilePart(_Media):
    """A document (PDF and others); `filename` travels to providers that want one."""

    type: Literal["file"] = "file"
    filename: str | None = None


class ToolCall(BaseModel):
    """A request from the model to run tool `name` with parsed `args`.

    It also reads as LangChain's ToolCall, a dict: `call["name"]`,
    `call["args"]`, `call["id"]`, `call["type"]` (always "tool_call"),
    `call.get(...)`, `keys()` and `"args" in call`; it stays a frozen
    pydantic model with attributes.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        if key == "type":
            return "tool_call"
        if key in _TOOL_CALL_KEYS:
            return self.__dict__[key]
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        """`call.get("id")`: the value of a LangChain ToolCall key, or `default`."""
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self) -> tuple[str, ...]:
        """LangChain's ToolCall keys: name, args, id, type (so `dict(call)` has them too)."""
        return _TOOL_CALL_KEYS_ORDER

    def __contains__(self, key: object) -> bool:
        return key in _TOOL_CALL_KEYS_ORDER

    def __repr__(self) -> str:
        # printed as the dict LangChain's ToolCall is: `print(message.tool_calls)` reads the same
        return repr({key: self[key] for key in _TOOL_CALL_KEYS_ORDER})

    __str__ = __repr__


_TOOL_CALL_KEYS = frozenset({"id", "name", "args"})
_TOOL_CALL_KEYS_ORDER = ("name", "args", "id", "type")


class ToolCallPart(_Part):
    """A tool call in its place among an AIMessage's parts."""

    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


MediaPart = ImagePart | AudioPart | VideoPart | FilePart
"""The parts `.media` returns."""

ContentPart = Annotated[
    TextPart | ImagePart | AudioPart | VideoPart | FilePart | ReasoningPart,
    Field(discriminator="type"),
]
"""What any message's content list may hold."""

AIContentPart = Annotated[
    TextPart | ImagePart | AudioPart | VideoPart | FilePart | ReasoningPart | ToolCallPart,
    Field(discriminator="type"),
]
"""What an AIMessage's content list may hold: also tool calls, in provider order."""
