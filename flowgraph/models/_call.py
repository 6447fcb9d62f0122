"""The one logic of a model call, and the two thin drivers that run it.

A provider describes a call as a *source*: a generator that yields effects
(`Open` a request, `ReadBody`, `ReadChunk`, `Close`, `Sleep`) and receives
their results, and yields `Output(chunk)` for each piece of the reply.
Everything else -- request building, retries and backoff, SSE/NDJSON
parsing, error mapping -- happens inside the source, without I/O. Two
drivers perform the effects: `run_sync` with an `httpx.Client` and
`time.sleep`, `run_async` with an `httpx.AsyncClient` and `asyncio.sleep`.
They are the only code that differs between sync and async, so the
behaviours cannot drift apart.

Around the source, a `CallSession` does what every call does whatever the
provider: charge the run's Budget, notify listeners, give the reply its id,
stream chunks to the running graph (`_context.emit("messages", chunk)`) and
to the call's `StreamingHandler`, parse structured output, record tokens.
`BaseChatModel.invoke`/`stream`/`ainvoke`/`astream` are ten-line wrappers
joining a session, a source and a driver.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

import flowgraph._hooks as _hooks
from flowgraph._context import (
    charge_model_call,
    current_task,
    emit,
    listening,
    record_tokens,
)
from flowgraph._ids import new_message_id
from flowgraph.errors import InvalidMessageError
from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ReasoningPart,
    RemoveMessage,
    SystemMessage,
    TextPart,
    ToolCallChunk,
    ToolMessage,
    coerce_messages,
    merge_chunks,
)
from flowgraph.models._base import (
    ChatModelListener,
    ChatOptions,
    Messages,
    ModelErrorEvent,
    ModelRequestEvent,
    ModelResponseEvent,
    StreamingHandler,
    ToolSpec,
    logger,
    parse_structured,
    tool_specs,
)
from flowgraph.models._bound import BoundChatModel, tool_choice_of

if TYPE_CHECKING:  # httpx stays off `import flowgraph`: only the HTTP adapters need it
    import httpx

    from flowgraph.models._pool import AsyncConnectionPool, ConnectionPool

__all__ = [
    "BaseChatModel",
    "Call",
    "CallState",
    "Close",
    "Effect",
    "Open",
    "Output",
    "ReadBody",
    "ReadChunk",
    "Sleep",
    "Source",
    "run_async",
    "run_sync",
]


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


# --------------------------------------------------------------------- effects


@dataclass(slots=True)
class Open:
    """Send `request`; the result is the `httpx.Response`, its body not read yet."""

    request: httpx.Request


@dataclass(slots=True)
class ReadBody:
    """Read the whole body; the result is bytes."""

    response: httpx.Response


@dataclass(slots=True)
class ReadChunk:
    """Read the next piece of the body; the result is bytes, b"" at the end."""

    response: httpx.Response


@dataclass(slots=True)
class Close:
    """Release the response's connection to the pool."""

    response: httpx.Response


@dataclass(slots=True)
class Sleep:
    seconds: float


@dataclass(slots=True)
class Output:
    """A piece of the reply for the caller."""

    chunk: AIMessageChunk


Effect: TypeAlias = Open | ReadBody | ReadChunk | Close | Sleep | Output
Source: TypeAlias = Generator[Effect, Any, None]


# --------------------------------------------------------------------- drivers


def run_sync(source: Source, connections: Callable[[], ConnectionPool]) -> Iterator[AIMessageChunk]:
    """Perform `source`'s effects with a blocking client; yield its output chunks.

    An I/O error is thrown into the source (which translates it); whatever
    leaves the source leaves here. Responses still open when the source
    stops -- an error, or a reader that stopped early -- are closed.
    """
    opened: dict[int, tuple[httpx.Response, Iterator[bytes] | None, httpx.Client]] = {}
    pool: ConnectionPool | None = None
    value: Any = None
    error: Exception | None = None
    try:
        while True:
            try:
                effect = source.send(value) if error is None else source.throw(error)
            except StopIteration:
                return
            value, error = None, None
            if type(effect) is Output:
                yield effect.chunk
                continue
            try:
                if type(effect) is Open:
                    pool = pool or connections()
                    client = pool.acquire()
                    try:
                        value = client.send(effect.request, stream=True)
                    except BaseException:
                        pool.release(client)
                        raise
                    opened[id(value)] = (value, None, client)
                elif type(effect) is ReadChunk:
                    response, chunks, client = opened[id(effect.response)]
                    if chunks is None:
                        chunks = response.iter_bytes()
                        opened[id(response)] = (response, chunks, client)
                    value = next(chunks, b"")
                elif type(effect) is ReadBody:
                    value = effect.response.read()
                elif type(effect) is Close:
                    _, _, client = opened.pop(id(effect.response))
                    try:
                        effect.response.close()
                    finally:
                        assert pool is not None
                        pool.release(client)
                elif type(effect) is Sleep:
                    time.sleep(effect.seconds)
            except Exception as exc:
                error = exc
    finally:
        source.close()
        for response, _, client in opened.values():
            try:
                response.close()
            finally:
                assert pool is not None
                pool.release(client)


async def run_async(
    source: Source, connections: Callable[[], AsyncConnectionPool]
) -> AsyncIterator[AIMessageChunk]:
    """`run_sync`'s twin over an `httpx.AsyncClient`; the same source runs unchanged."""
    opened: dict[int, tuple[httpx.Response, AsyncIterator[bytes] | None, httpx.AsyncClient]] = {}
    pool: AsyncConnectionPool | None = None
    value: Any = None
    error: Exception | None = None
    try:
        while True:
            try:
                effect = source.send(value) if error is None else source.throw(error)
            except StopIteration:
                return
            value, error = None, None
            if type(effect) is Output:
                yield effect.chunk
                continue
            try:
                if type(effect) is Open:
                    pool = pool or connections()
                    client = await pool.acquire()
                    try:
                        value = await client.send(effect.request, stream=True)
                    except BaseException:
                        pool.release(client)
                        raise
                    opened[id(value)] = (value, None, client)
                elif type(effect) is ReadChunk:
                    response, chunks, client = opened[id(effect.response)]
                    if chunks is None:
                        chunks = response.aiter_bytes()
                        opened[id(response)] = (response, chunks, client)
                    value = await anext(chunks, b"")
                elif type(effect) is ReadBody:
                    value = await effect.response.aread()
                elif type(effect) is Close:
                    _, _, client = opened.pop(id(effect.response))
                    try:
                        await effect.response.aclose()
                    finally:
                        assert pool is not None
                        pool.release(client)
                elif type(effect) is Sleep:
                    await asyncio.sleep(effect.seconds)
            except Exception as exc:
                error = exc
    finally:
        source.close()
        for response, _, client in opened.values():
            try:
                await response.aclose()
            finally:
                assert pool is not None
                pool.release(client)


# --------------------------------------------------------------------- session


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
            for part in chunk.content:
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


class BaseChatModel(ABC):
    """A chat model whose four entry points share one call logic.

    Subclasses provide `_source` (the provider's wire protocol as effects)
    and, when they talk HTTP, the clients; everything else is here.

    `invoke` asks for the whole reply at once, unless the model was made
    with `streaming=True`, the call has a `handler`, or it is called inside
    a run whose caller streams "messages": then it streams under the hood
    so tokens reach the handler and the run's "messages" stream as they
    arrive. Either way `invoke` returns a complete message or raises; it
    never returns half a reply.
    """

    provider: ClassVar[str] = "custom"

    def __init__(
        self,
        model: str,
        *,
        options: ChatOptions | None = None,
        listeners: Sequence[ChatModelListener] = (),
        streaming: bool = False,
    ) -> None:
        self.model = model
        self.options = options if options is not None else ChatOptions()
        """The model's default options; a node's and a call's options override them."""
        self.listeners: list[ChatModelListener] = list(listeners)
        self.streaming = streaming

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"

    # -- what subclasses provide

    @abstractmethod
    def _source(self, call: Call, state: CallState) -> Source:
        """The call as effects (see the module docstring)."""

    def _connections(self) -> ConnectionPool:
        raise NotImplementedError(f"{type(self).__name__} makes no HTTP requests")

    def _async_connections(self) -> AsyncConnectionPool:
        raise NotImplementedError(f"{type(self).__name__} makes no HTTP requests")

    # -- the four entry points

    def invoke(
        self,
        messages: Messages,
        *,
        tools: Sequence[object] = (),
        options: ChatOptions | None = None,
        handler: StreamingHandler | None = None,
    ) -> AIMessage:
        """The model's reply to `messages`."""
        session = self._session(messages, tools, options, handler, self._streams(handler))
        try:
            for chunk in run_sync(self._source(session.call, session.state), self._connections):
                session.on_chunk(chunk)
            return session.complete()[1]
        except BaseException as exc:
            session.fail(exc)
            raise

    async def ainvoke(
        self,
        messages: Messages,
        *,
        tools: Sequence[object] = (),
        options: ChatOptions | None = None,
        handler: StreamingHandler | None = None,
    ) -> AIMessage:
        """`invoke` without blocking the event loop."""
        session = self._session(messages, tools, options, handler, self._streams(handler))
        try:
            source = self._source(session.call, session.state)
            async for chunk in run_async(source, self._async_connections):
                session.on_chunk(chunk)
            return session.complete()[1]
        except BaseException as exc:
            session.fail(exc)
            raise

    def stream(
        self,
        messages: Messages,
        *,
        tools: Sequence[object] = (),
        options: ChatOptions | None = None,
        handler: StreamingHandler | None = None,
    ) -> Iterator[AIMessageChunk]:
        """The reply in chunks as they arrive; `sum(...).to_message()` equals `invoke`'s."""
        session = self._session(messages, tools, options, handler, True)
        try:
            for chunk in run_sync(self._source(session.call, session.state), self._connections):
                yield session.on_chunk(chunk)
            trailing = session.complete()[0]
            if trailing is not None:
                yield trailing
        except BaseException as exc:
            session.fail(exc)
            raise

    async def astream(
        self,
        messages: Messages,
        *,
        tools: Sequence[object] = (),
        options: ChatOptions | None = None,
        handler: StreamingHandler | None = None,
    ) -> AsyncIterator[AIMessageChunk]:
        """`stream` without blocking the event loop."""
        session = self._session(messages, tools, options, handler, True)
        try:
            source = self._source(session.call, session.state)
            async for chunk in run_async(source, self._async_connections):
                yield session.on_chunk(chunk)
            trailing = session.complete()[0]
            if trailing is not None:
                yield trailing
        except BaseException as exc:
            session.fail(exc)
            raise

    # -- LangChain's habit

    def bind_tools(
        self,
        tools: Sequence[object],
        *,
        tool_choice: object = None,
        options: ChatOptions | None = None,
        **option_fields: Any,
    ) -> BoundChatModel:
        """This model with `tools` sent on every call: `llm.bind_tools([search]).invoke(...)`.

        Tools are anything a call's `tools=` takes (a `Tool`, a plain function
        with type hints and a docstring, a pydantic class, a dict).
        `tool_choice` takes LangChain's spellings ("auto", "none", "any" or
        "required", a tool's name, True); other `ChatOptions` fields may be
        given by name (`temperature=0`). The result is a chat model: pass it
        to `ModelNode`, or call it inside a node, where its tokens stream to
        the run as this model's do.
        """
        unknown = sorted(set(option_fields) - _OPTION_NAMES)
        if unknown:
            raise TypeError(
                f"bind_tools() does not take {', '.join(unknown)}: other options are "
                f"ChatOptions fields ({', '.join(sorted(_OPTION_NAMES))}); provider fields go "
                "in extra={...}"
            )
        choice = tool_choice_of(tool_choice)
        chosen = dict(option_fields)
        if choice is not None:
            chosen["tool_choice"] = choice
        return BoundChatModel(self, tools, ChatOptions.merge(options, ChatOptions(**chosen)))

    # -- shared preparation

    def _streams(self, handler: StreamingHandler | None) -> bool:
        # inside a run whose caller streams "messages", the reply streams too: its tokens
        # reach the caller as they arrive, and invoke still returns the whole reply
        return self.streaming or handler is not None or listening("messages")

    def _session(
        self,
        messages: Messages,
        tools: Sequence[object],
        options: ChatOptions | None,
        handler: StreamingHandler | None,
        stream: bool,
    ) -> CallSession:
        merged = ChatOptions.merge(self.options, options)
        call = Call(
            model=merged.model or self.model,
            messages=_model_messages(messages),
            tools=tool_specs(tools),
            options=merged,
            stream=stream,
        )
        return CallSession(self.provider, call, self.listeners, handler)


_OPTION_NAMES = frozenset(field.name for field in fields(ChatOptions))


_SENDABLE = frozenset({SystemMessage, HumanMessage, AIMessage, ToolMessage})


def _model_messages(messages: Messages) -> list[BaseMessage]:
    if type(messages) is list and _SENDABLE.issuperset(map(type, messages)):
        return list(messages)  # a history from the state: messages already (one C-level pass)
    found: list[BaseMessage] = []
    for message in coerce_messages(messages):
        if isinstance(message, RemoveMessage):
            raise InvalidMessageError(
                f"RemoveMessage({message.id!r}) cannot be sent to a model; it is an "
                "instruction to add_messages. Merge it into the list first",
                message_id=message.id,
            )
        found.append(message)
    return found
