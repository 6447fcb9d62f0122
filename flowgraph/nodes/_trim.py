"""Conversation memory: trim a message list to a window of messages or tokens.

The window is the newest part of the conversation that fits, plus the
system message. An AIMessage that called tools and the ToolMessages that
answer it form one block, kept or dropped together: a provider rejects a
tool result whose call is gone, and a call whose results are gone.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Literal, cast, get_type_hints, overload

from flowgraph.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
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
    content = message.content_blocks
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
    """A fast estimate, LangChain's: characters / 4 per message rounded up, plus 3 per message.

    A message's characters are its text, its role as OpenAI names it ("user",
    "assistant", "system", "tool") and its name; an AI message's tool calls
    as LangChain prints them, a tool result's call id. A media part counts
    85 tokens. Good enough for windowing; exact counts depend on the model's
    tokenizer (see `tiktoken_counter`).
    """
    total = 0
    for message in messages:
        chars, media = _approximate_chars(message)
        total += TOKENS_PER_MESSAGE + math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MEDIA * media
    return total


_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


def _approximate_chars(message: BaseMessage) -> tuple[int, int]:
    """(characters, media parts) of one message, as `count_tokens_approximately` counts."""
    chars = len(_ROLES.get(message.type, message.type)) + len(message.name or "")
    media = 0
    content = message.content
    if isinstance(content, str):
        chars += len(content)
        if isinstance(message, AIMessage) and message.tool_calls:
            calls = [
                {"name": c.name, "args": c.args, "id": c.id, "type": "tool_call"}
                for c in message.tool_calls
            ]
            chars += len(repr(calls))
    else:
        for part in content:
            if isinstance(part, TextPart):
                chars += len(part.text)
            elif isinstance(part, ReasoningPart | ToolCallPart):
                chars += len(repr(part.model_dump(exclude_none=True)))
            else:
                media += 1
    if isinstance(message, ToolMessage):
        chars += len(message.tool_call_id)
    return chars, media


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


MessageType = str | type[BaseMessage]
"""A message type for `start_on` / `end_on`: "human", "ai", "system", "tool", or a class."""
Counter = TokenCounter | Callable[[BaseMessage], int] | Literal["approximate"] | object
"""What `token_counter` takes: a function of a message list, a function of one message
(its first parameter annotated as a message), "approximate", or a chat model."""

_TYPE_NAMES = {"user": "human", "assistant": "ai", "developer": "system"}


@overload
def trim_messages(
    messages: Sequence[AnyMessage | MessageLike],
    *,
    max_messages: int | None = None,
    max_tokens: int | None = None,
    token_counter: Counter = count_tokens_approximately,
    strategy: Literal["last", "first"] = "last",
    include_system: bool = True,
    start_on: MessageType | Sequence[MessageType] | None = None,
    end_on: MessageType | Sequence[MessageType] | None = None,
    allow_partial: bool = False,
    text_splitter: Callable[[str], list[str]] | None = None,
) -> list[AnyMessage]: ...


@overload
def trim_messages(
    messages: None = None,
    *,
    max_messages: int | None = None,
    max_tokens: int | None = None,
    token_counter: Counter = count_tokens_approximately,
    strategy: Literal["last", "first"] = "last",
    include_system: bool = True,
    start_on: MessageType | Sequence[MessageType] | None = None,
    end_on: MessageType | Sequence[MessageType] | None = None,
    allow_partial: bool = False,
    text_splitter: Callable[[str], list[str]] | None = None,
) -> Trimmer: ...


def trim_messages(
    messages: Sequence[AnyMessage | MessageLike] | None = None,
    *,
    max_messages: int | None = None,
    max_tokens: int | None = None,
    token_counter: Counter = count_tokens_approximately,
    strategy: Literal["last", "first"] = "last",
    include_system: bool = True,
    start_on: MessageType | Sequence[MessageType] | None = None,
    end_on: MessageType | Sequence[MessageType] | None = None,
    allow_partial: bool = False,
    text_splitter: Callable[[str], list[str]] | None = None,
) -> list[AnyMessage] | Trimmer:
    """The newest (or oldest) messages that fit both windows; LangChain's arguments work too.

    - `max_messages` counts the kept system message (DESIGN §9);
    - `max_tokens` is measured with `token_counter`: a function of a list
      of messages (`len` counts messages), a function of one message, the
      string "approximate", or a chat model (whose count is the estimate);
      default `count_tokens_approximately` (`tiktoken_counter()` when
      tiktoken is installed);
    - `strategy="last"` (the default) keeps the newest messages, "first"
      the oldest;
    - with "last", a leading system message is kept first whatever the
      windows (`include_system=True`, the default here; LangChain's default
      is False); with `include_system=False` it is an ordinary message, kept
      only when the window reaches back to it;
    - an AIMessage with tool calls and its ToolMessages are kept or dropped
      together: the result never holds a call without its results, nor a
      result without its call (LangChain's may);
    - `start_on` (with "last"): the kept messages start at the first of
      this type ("human", a class, or a list of them), the system message
      aside; `end_on`: the messages end on one of this type (with "last"
      before trimming, with "first" after, as in LangChain);
    - `allow_partial`: a message that does not fit whole may be cut to the
      newest (with "first": the oldest) of its content parts, or of its
      text's lines (`text_splitter` splits the text otherwise).

    The input is not modified; with neither limit, everything is kept.
    Without `messages`, the trimmer itself is returned: call it (or its
    `invoke`) with the messages later.
    """
    if messages is None:
        return Trimmer(
            max_messages=max_messages,
            max_tokens=max_tokens,
            token_counter=token_counter,
            strategy=strategy,
            include_system=include_system,
            start_on=start_on,
            end_on=end_on,
            allow_partial=allow_partial,
            text_splitter=text_splitter,
        )
    if max_messages is not None and max_messages < 1:
        raise ValueError(f"max_messages must be at least 1, not {max_messages}")
    if max_tokens is not None and max_tokens < 0:
        raise ValueError(f"max_tokens must not be negative, not {max_tokens}")
    if strategy not in ("last", "first"):
        raise ValueError(f"strategy must be 'last' or 'first', not {strategy!r}")
    if strategy == "first" and _types(start_on):
        raise ValueError("start_on applies to strategy='last' (the newest messages)")
    coerced = coerce_messages(list(messages))
    if any(isinstance(m, RemoveMessage) for m in coerced):
        raise ValueError(
            "trim_messages trims a conversation; a RemoveMessage is an update for "
            "add_messages, not part of one"
        )
    window = _Window(
        max_messages,
        max_tokens,
        _list_counter(token_counter),
        (text_splitter or _lines) if allow_partial else None,
    )
    items = cast(list[BaseMessage], coerced)
    ends = _types(end_on)
    if strategy == "first":
        kept = window.fill(_blocks(items), newest=False)
        trimmed = _end_on(kept, ends) if ends else kept
        return cast(list[AnyMessage], [m for block in trimmed for m in block])
    blocks = _blocks(items)
    if ends:  # before anything is kept: it may leave nothing, the system message included
        blocks = _end_on(blocks, ends)
    system: list[BaseMessage] = []
    if include_system and blocks and isinstance(blocks[0][0], SystemMessage):
        system = blocks.pop(0)
        window.take(system, always=True)
    kept = window.fill(blocks, newest=True)
    starts = _types(start_on)
    if starts:
        while kept and not _is_a(kept[0][0], starts):
            kept.pop(0)
    return cast(list[AnyMessage], [*system, *(m for block in kept for m in block)])


class Trimmer:
    """`trim_messages` with its arguments given, waiting for the messages.

    What `trim_messages(max_tokens=...)` returns without messages, as
    LangChain's does: `trimmer.invoke(state["messages"])`, or `trimmer(...)`,
    or `ModelNode(memory=trimmer)`.
    """

    def __init__(self, **arguments: Any) -> None:
        self.arguments = arguments

    def __call__(self, messages: Sequence[AnyMessage | MessageLike]) -> list[AnyMessage]:
        return trim_messages(messages, **self.arguments)

    def invoke(self, messages: Sequence[AnyMessage | MessageLike]) -> list[AnyMessage]:
        """The messages trimmed (LangChain's Runnable spelling of a call)."""
        return self(messages)

    def __repr__(self) -> str:
        given = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items() if v is not None)
        return f"trim_messages({given})"


class _Window:
    """The room left in the message and token windows, filled block by block."""

    def __init__(
        self,
        max_messages: int | None,
        max_tokens: int | None,
        counter: TokenCounter,
        splitter: Callable[[str], list[str]] | None,
    ) -> None:
        self.messages = max_messages
        self.tokens = max_tokens
        self.counter = counter
        self.splitter = splitter

    def take(self, block: list[BaseMessage], *, always: bool = False) -> bool:
        """Count `block` in if it fits both windows (`always`: the system message, anyway)."""
        cost = self.counter(block) if self.tokens is not None else 0
        if not always:
            if self.messages is not None and len(block) > self.messages:
                return False
            if self.tokens is not None and cost > self.tokens:
                return False
        self._spend(len(block), cost)
        return True

    def _spend(self, messages: int, tokens: int) -> None:
        if self.messages is not None:
            self.messages = max(self.messages - messages, 0)
        if self.tokens is not None:
            self.tokens = max(self.tokens - tokens, 0)

    def fill(self, blocks: list[list[BaseMessage]], *, newest: bool) -> list[list[BaseMessage]]:
        """Whole blocks from the newest (or oldest) end while they fit; then maybe a part."""
        kept: list[list[BaseMessage]] = []
        for block in reversed(blocks) if newest else blocks:
            if self.take(block):
                kept.append(block)
                continue
            part = self._partial(block, newest=newest)
            if part is not None:
                kept.append([part])
            break
        if newest:
            kept.reverse()
        return kept

    def _partial(self, block: list[BaseMessage], *, newest: bool) -> BaseMessage | None:
        """The largest newest (oldest) piece of a lone message that fits, or None."""
        if self.splitter is None or len(block) != 1 or self.messages == 0:
            return None
        message = block[0]
        if isinstance(message, AIMessage) and message.has_tool_calls:
            return None  # its calls are not divisible
        content = message.content
        pieces: list[Any] = (
            list(content) if not isinstance(content, str) else self.splitter(content)
        )
        best: BaseMessage | None = None
        for size in range(1, len(pieces)):
            chosen = pieces[-size:] if newest else pieces[:size]
            piece = "".join(chosen) if isinstance(content, str) else chosen
            candidate = message.model_copy(update={"content": piece})
            if self.tokens is not None and self.counter([candidate]) > self.tokens:
                break
            best = candidate
        if best is not None:
            self._spend(1, self.counter([best]) if self.tokens is not None else 0)
        return best


def _lines(text: str) -> list[str]:
    """The default split of a message's text for `allow_partial`: lines, with their ends."""
    return text.splitlines(keepends=True)


def _list_counter(token_counter: Counter) -> TokenCounter:
    """Any accepted `token_counter` as a function of a message list."""
    if isinstance(token_counter, str):
        if token_counter != "approximate":
            raise ValueError(
                f"token_counter={token_counter!r}: the only name known is 'approximate'"
            )
        return count_tokens_approximately
    counts = getattr(token_counter, "get_num_tokens_from_messages", None)
    if callable(counts):  # a model that can count (LangChain's spelling)
        return lambda messages: int(counts(list(messages)))
    if hasattr(token_counter, "invoke") and hasattr(token_counter, "ainvoke"):
        return count_tokens_approximately  # a chat model: an estimate, as no tokenizer is here
    if not callable(token_counter):
        raise TypeError(
            f"token_counter must be a function, 'approximate' or a chat model, not "
            f"{type(token_counter).__name__}"
        )
    if _counts_one_message(token_counter):
        one = cast(Callable[[BaseMessage], int], token_counter)
        return lambda messages: sum(one(m) for m in messages)
    return cast(TokenCounter, token_counter)


def _counts_one_message(fn: Callable[..., Any]) -> bool:
    """True for a function whose first parameter is annotated as one message."""
    try:
        hints = get_type_hints(fn)
        first = next(iter(inspect.signature(fn).parameters), None)
    except (TypeError, ValueError, NameError):
        return False
    hint = hints.get(first) if first is not None else None
    return isinstance(hint, type) and issubclass(hint, BaseMessage)


def _types(given: MessageType | Sequence[MessageType] | None) -> tuple[MessageType, ...]:
    if given is None or given == "any":
        return ()
    if isinstance(given, (str, type)):
        return (given,)
    return tuple(given)


def _is_a(message: BaseMessage, types: tuple[MessageType, ...]) -> bool:
    for kind in types:
        if isinstance(kind, str):
            if message.type == _TYPE_NAMES.get(kind, kind):
                return True
        elif isinstance(message, kind):
            return True
    return False


def _end_on(
    blocks: list[list[BaseMessage]], types: tuple[MessageType, ...]
) -> list[list[BaseMessage]]:
    """The blocks up to the last one that ends on a message of `types` (whole blocks only)."""
    end = len(blocks)
    while end and not _is_a(blocks[end - 1][-1], types):
        end -= 1
    return blocks[:end]
