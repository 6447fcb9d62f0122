"""`ScriptedChatModel`: a deterministic chat model for tests, examples and offline runs.

    model = ScriptedChatModel([
        {"tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]},
        "It is sunny in Paris.",
    ])

Each call takes the next reply of the script -- or, given a function, the
function's answer to the messages. A reply is a string, an `AIMessage`, a
dict (``content``/``text``, ``reasoning``, ``tool_calls`` as ``{"name",
"args", "id"?}``, ``usage``, ``id``), or an exception instance, which the
call raises (to rehearse failures). Tool calls without an id get
``call_<call number>_<position>``, so ids repeat run after run.

The model behaves like a real one towards a graph: it charges the Budget,
notifies listeners, streams its reply (words of text and reasoning, tool
arguments in small slices) to handlers and to a graph's "messages" stream,
and parses structured output. Usage, unless the reply gives its own,
counts one token per word (input: every message's text; output: the
reply's), so token budgets can be exercised offline. `requests` records
every call's messages, tools and options.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from flowgraph.errors import ModelError
from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ReasoningPart,
    TextPart,
    ToolCallChunk,
    Usage,
)
from flowgraph.models._base import ChatModelListener, ChatOptions, ToolSpec
from flowgraph.models._call import BaseChatModel, Call, CallState, Output, Source

__all__ = ["ScriptedChatModel", "ScriptedReply", "ScriptedRequest"]

ScriptedReply: TypeAlias = str | AIMessage | Mapping[str, Any] | BaseException
"""One scripted answer: text, a whole AIMessage, a dict, or an exception to raise."""

_WORDS = re.compile(r"\s*\S+\s*|\s+")
_ARGS_SLICE = 8


@dataclass(frozen=True, slots=True)
class ScriptedRequest:
    """What one call asked: the messages, tools and merged options."""

    messages: list[BaseMessage]
    tools: tuple[ToolSpec, ...]
    options: ChatOptions
    stream: bool


class ScriptedChatModel(BaseChatModel):
    """Replies from a script (a list) or a function of the messages; see the module docstring."""

    provider: ClassVar[str] = "scripted"

    def __init__(
        self,
        responses: Sequence[ScriptedReply] | Callable[[list[BaseMessage]], ScriptedReply],
        *,
        model: str = "scripted",
        options: ChatOptions | None = None,
        listeners: Sequence[ChatModelListener] = (),
        streaming: bool = False,
    ) -> None:
        super().__init__(model, options=options, listeners=listeners, streaming=streaming)
        if isinstance(responses, (str, bytes, Mapping)) or not (
            callable(responses) or isinstance(responses, Sequence)
        ):
            raise TypeError(
                "ScriptedChatModel takes a list of replies or a function of the messages, "
                f"not {type(responses).__name__}; wrap a single reply in a list"
            )
        self._script = responses
        self._lock = threading.Lock()
        self.requests: list[ScriptedRequest] = []
        """Every call received, in order."""

    @property
    def calls(self) -> int:
        """How many calls were made."""
        return len(self.requests)

    def _source(self, call: Call, state: CallState) -> Source:
        state.attempts = 1
        reply, number = self._next(call)
        chunk = _reply_chunk(reply, call, number)
        if not call.stream:
            yield Output(chunk)
            return
        for piece in _pieces(chunk):
            yield Output(piece)

    def _next(self, call: Call) -> tuple[ScriptedReply, int]:
        with self._lock:
            number = len(self.requests) + 1
            self.requests.append(
                ScriptedRequest(call.messages, call.tools, call.options, call.stream)
            )
        script = self._script
        if callable(script):
            reply = script(call.messages)
        elif number <= len(script):
            reply = script[number - 1]
        else:
            raise ModelError(
                f"ScriptedChatModel has {len(script)} replies and was called a "
                f"{_ordinal(number)} time; add replies to the script or pass a function "
                "of the messages"
            )
        if isinstance(reply, BaseException):
            raise reply
        return reply, number


def _ordinal(number: int) -> str:
    suffix = (
        "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    )
    return f"{number}{suffix}"


def _reply_chunk(reply: ScriptedReply, call: Call, number: int) -> AIMessageChunk:
    message = _message(reply, number)
    chunk = AIMessageChunk.from_message(message)
    metadata = {
        "finish_reason": "tool_calls" if message.tool_calls else "stop",
        "model_name": call.model,
        **message.response_metadata,
    }
    usage = message.usage
    if usage is None:
        words = 0
        for sent in call.messages:  # a loop, not sum(): this runs over the whole history
            content = sent.content
            words += len(content.split()) if type(content) is str else _word_count(sent.text)
        output = _word_count(message.text) + _word_count(message.reasoning)
        output += sum(_word_count(str(c.args)) for c in message.tool_calls)
        usage = Usage(input_tokens=words, output_tokens=output)
    return chunk.model_copy(update={"usage": usage, "response_metadata": metadata})


def _word_count(text: str) -> int:
    return len(text.split())


def _message(reply: object, number: int) -> AIMessage:
    if isinstance(reply, AIMessage):
        return reply
    if isinstance(reply, str):
        return AIMessage(content=reply)
    if isinstance(reply, Mapping):
        data = dict(reply)
        text = data.pop("text", None)
        if text is not None:
            data.setdefault("content", text)
        reasoning = data.pop("reasoning", None)
        calls = [
            {**call, "id": call.get("id") or f"call_{number}_{position}"}
            if isinstance(call, Mapping)
            else call
            for position, call in enumerate(data.pop("tool_calls", None) or ())
        ]
        if reasoning:
            content = data.get("content", "")
            parts: list[Any] = [ReasoningPart(text=reasoning)]
            if isinstance(content, str):
                parts += [TextPart(text=content)] if content else []
            else:
                parts += list(content)
            data["content"] = parts
        return AIMessage.model_validate({**data, "tool_calls": calls})
    raise TypeError(
        f"A scripted reply is a string, an AIMessage, a dict or an exception, "
        f"not {type(reply).__name__}"
    )


def _pieces(whole: AIMessageChunk) -> list[AIMessageChunk]:
    """The reply as a stream: words of text, slices of tool arguments, then usage."""
    pieces: list[AIMessageChunk] = []
    for part in whole.content_blocks:
        if isinstance(part, (TextPart, ReasoningPart)):
            words = _WORDS.findall(part.text) or [""]
            kind = type(part)
            for position, word in enumerate(words):
                last = position == len(words) - 1
                signature = part.signature if isinstance(part, ReasoningPart) and last else None
                piece: Any = (
                    TextPart(text=word)
                    if kind is TextPart
                    else ReasoningPart(text=word, signature=signature)
                )
                pieces.append(AIMessageChunk(content=[piece], id=whole.id, name=whole.name))
        elif isinstance(part, ToolCallChunk):
            args = part.args
            slices = [args[i : i + _ARGS_SLICE] for i in range(0, len(args), _ARGS_SLICE)] or [""]
            for position, text in enumerate(slices):
                head = position == 0
                call = ToolCallChunk(
                    index=part.index,
                    id=part.id if head else None,
                    name=part.name if head else None,
                    args=text,
                )
                pieces.append(AIMessageChunk(content=[call], id=whole.id, name=whole.name))
        else:
            pieces.append(AIMessageChunk(content=[part], id=whole.id, name=whole.name))
    pieces.append(
        AIMessageChunk(
            id=whole.id,
            name=whole.name,
            usage=whole.usage,
            response_metadata=whole.response_metadata,
            metadata=whole.metadata,
        )
    )
    return pieces
