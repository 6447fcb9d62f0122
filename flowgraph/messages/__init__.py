"""Chat messages, their content parts, and conversions to dicts and OpenAI's format."""

import typing as _typing

from flowgraph._lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from flowgraph.messages._chunks import AIMessageChunk, ChunkPart, ToolCallChunk, merge_chunks
    from flowgraph.messages._coerce import (
        MessageLike,
        coerce_message,
        coerce_messages,
        messages_from_dicts,
        messages_to_dicts,
    )
    from flowgraph.messages._from_openai import OPENAI_FILE_URL_PREFIX, from_openai
    from flowgraph.messages._messages import (
        REMOVE_ALL_MESSAGES,
        AIMessage,
        AnyMessage,
        AssistantMessage,
        BaseMessage,
        HumanMessage,
        InvalidToolCall,
        RemoveMessage,
        SystemMessage,
        ToolMessage,
        ToolResponseMessage,
        Usage,
        UserMessage,
    )
    from flowgraph.messages._openai import to_openai
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

_LAZY = {
    "AIMessageChunk": "flowgraph.messages._chunks",
    "ChunkPart": "flowgraph.messages._chunks",
    "ToolCallChunk": "flowgraph.messages._chunks",
    "merge_chunks": "flowgraph.messages._chunks",
    "MessageLike": "flowgraph.messages._coerce",
    "coerce_message": "flowgraph.messages._coerce",
    "coerce_messages": "flowgraph.messages._coerce",
    "messages_from_dicts": "flowgraph.messages._coerce",
    "messages_to_dicts": "flowgraph.messages._coerce",
    "REMOVE_ALL_MESSAGES": "flowgraph.messages._messages",
    "AIMessage": "flowgraph.messages._messages",
    "AnyMessage": "flowgraph.messages._messages",
    "AssistantMessage": "flowgraph.messages._messages",
    "BaseMessage": "flowgraph.messages._messages",
    "HumanMessage": "flowgraph.messages._messages",
    "InvalidToolCall": "flowgraph.messages._messages",
    "RemoveMessage": "flowgraph.messages._messages",
    "SystemMessage": "flowgraph.messages._messages",
    "ToolMessage": "flowgraph.messages._messages",
    "ToolResponseMessage": "flowgraph.messages._messages",
    "Usage": "flowgraph.messages._messages",
    "UserMessage": "flowgraph.messages._messages",
    "OPENAI_FILE_URL_PREFIX": "flowgraph.messages._from_openai",
    "from_openai": "flowgraph.messages._from_openai",
    "to_openai": "flowgraph.messages._openai",
    "AIContentPart": "flowgraph.messages._parts",
    "AudioPart": "flowgraph.messages._parts",
    "ContentPart": "flowgraph.messages._parts",
    "FilePart": "flowgraph.messages._parts",
    "ImagePart": "flowgraph.messages._parts",
    "MediaPart": "flowgraph.messages._parts",
    "ReasoningPart": "flowgraph.messages._parts",
    "TextPart": "flowgraph.messages._parts",
    "ToolCall": "flowgraph.messages._parts",
    "ToolCallPart": "flowgraph.messages._parts",
    "VideoPart": "flowgraph.messages._parts",
}
"""Every exported name and the module that defines it, imported on first use."""

__getattr__, __dir__ = _lazy_exports("flowgraph.messages", _LAZY, globals())

__all__ = [
    "OPENAI_FILE_URL_PREFIX",
    "REMOVE_ALL_MESSAGES",
    "AIContentPart",
    "AIMessage",
    "AIMessageChunk",
    "AnyMessage",
    "AssistantMessage",
    "AudioPart",
    "BaseMessage",
    "ChunkPart",
    "ContentPart",
    "FilePart",
    "HumanMessage",
    "ImagePart",
    "InvalidToolCall",
    "MediaPart",
    "MessageLike",
    "ReasoningPart",
    "RemoveMessage",
    "SystemMessage",
    "TextPart",
    "ToolCall",
    "ToolCallChunk",
    "ToolCallPart",
    "ToolMessage",
    "ToolResponseMessage",
    "Usage",
    "UserMessage",
    "VideoPart",
    "coerce_message",
    "coerce_messages",
    "from_openai",
    "merge_chunks",
    "messages_from_dicts",
    "messages_to_dicts",
    "to_openai",
]
