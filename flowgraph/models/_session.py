"""What every model call does around its provider: budget, ids, listeners, tracing, output.

A `CallSession` is made just before a call's first request and sees each
chunk as it streams, then the end or the failure; the drivers in `_call`
run it the same way for every provider, sync or async.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import flowgraph._hooks as _hooks
from flowgraph._context import charge_model_call, current_task, emit, record_tokens
from flowgraph._ids import new_message_id
from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ReasoningPart,
    TextPart,
    ToolCallChunk,
    merge_chunks,
)
from flowgraph.models._base import (
    ChatModelListener,
    ChatOptions,
    ModelErrorEvent,
    ModelRequestEvent,
    ModelResponseEvent,
    StreamingHandler,
    ToolSpec,
    logger,
    parse_structured,
)

__all__ = ["Call", "CallSession", "CallState"]


# ------------------------------------------------------------------ the call


@dataclass(frozen=True, slots=True)
class Call:
    """One call as a source sees it: options already merged, tools normalised."""

    model: str
    messages: list[BaseMessage]
    tools: tuple[ToolSpec, ...]
    options: ChatOptions
    stream: bool
    """Whether the request asks the provider to stream its reply."""


@dataclass(slots=True)
class CallState:
    """What a source reports back while it runs."""

    attempts: int = 0
    delivered: bool = False
    """A chunk went out; from then on nothing may be retried (it would repeat output)."""


class CallSession:
    """Everything a call does around its source, the same for every provider.

    Created just before the first request: charging the Budget here means a
    run that has no model calls left fails before anything is sent.
    """

    __slots__ = (
        "call",
        "chunks",
        "event",
        "handler",
        "has_id",
        "in_run",
        "listeners",
        "reply_id",
        "seen",
        "started",
        "state",
    )

    def __init__(
        self,
        provider: str,
        call: Call,
        listeners: Sequence[ChatModelListener],
        handler: StreamingHandler | None,
    ) -> None:
        charge_model_call()
        self.call = call
        self.listeners = listeners
        self.handler = handler
        self.state = CallState()
        self.chunks: list[AIMessageChunk] = []
        self.in_run = current_task.get() is not None
        self.reply_id: str | None = None
        self.has_id = False
        self.event = ModelRequestEvent(
            provider, call.model, call.messages, call.tools, call.options, call.stream
        )
        _notify(listeners, "on_request", self.event)
        observer = _hooks.observer
        self.seen = None if observer is None else observer.model_started(provider, call)
        self.started = time.perf_counter()

    def on_chunk(self, chunk: AIMessageChunk) -> AIMessageChunk:
        """Record a chunk, give it the reply's id, and pass it to the run and the handler.

        Inside a run a reply without a provider id gets one from `new_message_id()`
        up front, so its streamed chunks and the stored message share it.
        """
        if not self.has_id:
            self.has_id = True
            self.reply_id = chunk.id or (new_message_id() if self.in_run else None)
        if chunk.id != self.reply_id:
            chunk = chunk.model_copy(update={"id": self.reply_id})
        self.chunks.append(chunk)
        emit("messages", chunk)
        handler = self.handler
        if handler is not None:
            for part in chunk.content_blocks:
                if isinstance(part, TextPart):
                    if part.text:
                        handler.on_partial_text(part.text)
                elif isinstance(part, ReasoningPart):
                    if part.text:
                        handler.on_partial_reasoning(part.text)
                elif isinstance(part, ToolCallChunk):
                    handler.on_partial_tool_call(part)
        return chunk

    def complete(self) -> tuple[AIMessageChunk | None, AIMessage]:
        """The reply, and a last chunk carrying its structured output when one was asked for."""
        trailing = None
        response_format = self.call.options.response_format
        if response_format is not None:
            extra = parse_structured(merge_chunks(self.chunks).text, response_format)
            if extra:
                trailing = self.on_chunk(AIMessageChunk(id=self.reply_id, metadata=extra))
        message = merge_chunks(self.chunks).to_message()
        usage = message.usage
        if usage is not None:
            record_tokens(usage.input_tokens, usage.output_tokens)
        _notify(
            self.listeners,
            "on_response",
            ModelResponseEvent(
                self.event, message, time.perf_counter() - self.started, self.state.attempts
            ),
        )
        if self.handler is not None:
            self.handler.on_complete_response(message)
        if self.seen is not None:
            self.seen.end(message)
        return trailing, message

    def fail(self, error: BaseException) -> None:
        """Tell listeners and the handler that the call failed (the caller re-raises).

        A call cancelled, or a stream its reader left (GeneratorExit), only
        ends the observer's watch: for listeners and handlers it did not fail.
        """
        if self.seen is not None:
            self.seen.end(error=error)
        if not isinstance(error, Exception):
            return
        _notify(
            self.listeners,
            "on_error",
            ModelErrorEvent(
                self.event, error, time.perf_counter() - self.started, self.state.attempts
            ),
        )
        if self.handler is not None:
            self.handler.on_error(error)


def _notify(listeners: Sequence[ChatModelListener], method: str, event: object) -> None:
    for listener in listeners:
        try:
            getattr(listener, method)(event)
        except Exception:
            logger.exception("chat model listener %r failed in %s", listener, method)


# -------------------------------------------------------------------- the base
