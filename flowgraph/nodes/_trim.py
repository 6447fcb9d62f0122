"""Conversation memory: trim a message list to a window of messages or tokens.

The window is the newest part of the conversation that fits, plus the
system message. An AIMessage that called tools and the ToolMessages that
answer it form one block, kept or dropped together: a provider rejects a
tool result whose call is gone, and a call whose results are gone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Literal, cast

from flowgraph.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    MessageLike,
    ReasoningPart,
    RemoveMessage,
    SystemMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    coerce_messages,
)

__all__ = [
    "TokenCounter",
    "count_tokens_approximately",
    "tiktoken_counter",
    "trim_messages",
]

TokenCounter = Callable[[Sequence[BaseMessage]], int]
"""Counts the tokens of a list of messages."""

CHARS_PER_TOKEN = 4.0
"""English text averages about four characters per token in GPT-style vocabularies."""
TOKENS_PER_MESSAGE = 3
"""Per-message overhead (role and separators), as OpenAI documents for its chat format."""
TOKENS_PER_MEDIA = 85
"""A fixed guess per image/audio/video/file part (OpenAI's cost of a low-detail image)."""


def _message_text(message: BaseMessage) -> tuple[list[str], int]:
    """(texts the model reads, number of media parts) of one message."""
    texts: list[str] = []
    media = 0
    content = message.content
    if isinstance(content, str):
        texts.append(content)
    else:
        for part in content:
            if isinstance(part, (TextPart, ReasoningPart)):
                texts.append(part.text)
            elif isinstance(part, ToolCallPart):
                texts.append(part.name)
                texts.append(json.dumps(part.args, ensure_ascii=False))
            else:
                media += 1
    if isinstance(message, AIMessage):
        for call in message.invalid_tool_calls:
            texts.append((call.name or "") + call.args)
    if message.name:
        texts.append(message.name)
    return texts, media


def count_tokens_approximately(messages: Sequence[BaseMessage]) -> int:
    """A fast estimate: characters / 4, plus 3 per message and 85 per media part.

    Good enough for windowing; exact counts depend on the model's
    tokenizer (see `tiktoken_counter`).
    """
    total = 0
    for message in messages:
        texts, media = _message_text(message)
        chars = sum(len(text) for text in texts)
        total += TOKENS_PER_MESSAGE + math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MEDIA * media
    return total


@lru_cache(maxsize=8)
def _encoding(name: str) -> Any:
    try:
        import tiktoken  # type: ignore[import-not-found, unused-ignore]  # optional
    except ImportError:
        raise ImportError(
            "tiktoken_counter needs tiktoken: pip install tiktoken "
            "(or use the default count_tokens_approximately)"
        ) from None
    try:
        return tiktoken.encoding_for_model(name)
    except KeyError:
        return tiktoken.get_encoding(name)


def tiktoken_counter(model_or_encoding: str = "o200k_base") -> TokenCounter:
    """A counter that uses tiktoken's tokenizer for OpenAI models (needs `tiktoken`).

    `model_or_encoding` is a model name ("gpt-4o") or an encoding
    ("o200k_base", "cl100k_base"). Counts follow OpenAI's chat format: 3
    tokens per message plus its encoded text, name and tool calls; media
    parts are counted as `TOKENS_PER_MEDIA` each.
    """
    encoding = _encoding(model_or_encoding)

    def count(messages: Sequence[BaseMessage]) -> int:
        total = 0
        for message in messages:
            texts, media = _message_text(message)
            total += TOKENS_PER_MESSAGE + TOKENS_PER_MEDIA * media
            total += sum(len(encoding.encode(text)) for text in texts if text)
        return total

    return count


def _call_ids(message: AIMessage) -> set[str]:
    ids = {call.id for call in message.tool_calls}
    ids.update(call.id for call in message.invalid_tool_calls if call.id is not None)
    return ids


def _blocks(messages: Sequence[BaseMessage]) -> list[list[BaseMessage]]:
    """Consecutive groups that must stay together: a tool-calling AIMessage and its answers."""
    blocks: list[list[BaseMessage]] = []
    open_calls: set[str] = set()
    for message in messages:
        if isinstance(message, ToolMessage) and message.tool_call_id in open_calls and blocks:
            blocks[-1].append(message)
            continue
        blocks.append([message])
        open_calls = _call_ids(message) if isinstance(message, AIMessage) else set()
    return blocks


def trim_messages(
    messages: Sequence[AnyMessage | MessageLike],
    *,
    max_messages: int | None = None,
    max_tokens: int | None = None,
    token_counter: TokenCounter = count_tokens_approximately,
    include_system: bool = True,
    start_on: Literal["any", "human"] = "any",
) -> list[AnyMessage]:
    """The newest messages that fit both windows, after the system message.

    - `max_messages` counts the kept system message (DESIGN §9);
    - `max_tokens` is measured with `token_counter` (default
      `count_tokens_approximately`; `tiktoken_counter()` when tiktoken is
      installed), the system message included;
    - a leading system message is always kept (`include_system=False`
      drops it), even when it alone exceeds a window;
    - an AIMessage with tool calls and its ToolMessages are kept or dropped
      together, and only whole blocks from the newest backwards are kept,
      so the result is the system message plus a suffix of the rest;
    - `start_on="human"` also drops kept messages before the first human
      message (for providers that want the conversation to start with one).

    The input is not modified; with neither limit, everything is kept.
    """
    if max_messages is not None and max_messages < 1:
        raise ValueError(f"max_messages must be at least 1, not {max_messages}")
    if max_tokens is not None and max_tokens < 0:
        raise ValueError(f"max_tokens must not be negative, not {max_tokens}")
    coerced = coerce_messages(list(messages))
    if any(isinstance(m, RemoveMessage) for m in coerced):
        raise ValueError(
            "trim_messages trims a conversation; a RemoveMessage is an update for "
            "add_messages, not part of one"
        )
    items = cast(list[BaseMessage], coerced)
    system: list[BaseMessage] = []
    if items and isinstance(items[0], SystemMessage):
        if include_system:
            system = items[:1]
        items = items[1:]
    used_messages = len(system)
    used_tokens = token_counter(system) if system and max_tokens is not None else 0
    kept: list[list[BaseMessage]] = []
    for block in reversed(_blocks(items)):
        if max_messages is not None and used_messages + len(block) > max_messages:
            break
        if max_tokens is not None:
            cost = token_counter(block)
            if used_tokens + cost > max_tokens:
                break
            used_tokens += cost
        used_messages += len(block)
        kept.append(block)
    kept.reverse()
    if start_on == "human":
        while kept and not isinstance(kept[0][0], HumanMessage):
            kept.pop(0)
    trimmed = [*system, *(message for block in kept for message in block)]
    return cast(list[AnyMessage], trimmed)
