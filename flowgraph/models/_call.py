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
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from flowgraph._context import (
    listening,
)
from flowgraph.errors import InvalidMessageError
from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    coerce_messages,
)
from flowgraph.models._base import (
    ChatModelListener,
    ChatOptions,
    Messages,
    StreamingHandler,
    tool_specs,
)
from flowgraph.models._bound import BoundChatModel, tool_choice_of
from flowgraph.models._session import Call, CallSession, CallState

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
        config: Mapping[str, Any] | None = None,
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
        config: Mapping[str, Any] | None = None,
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
        config: Mapping[str, Any] | None = None,
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
        config: Mapping[str, Any] | None = None,
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
