"""`stream_events(..., version="v3")`: LangGraph 1.2's run stream and its projections.

LangGraph 1.2 hands back a run object whose attributes are streams the
caller reads in any order: `.values` (the state after each step),
`.messages` (one stream per model reply, each with its own `.text` token
stream and `.output` message), `.subgraphs` (a handle per subgraph run,
with the same projections), and `.output`, `.interrupted`, `.interrupts`
once the run ends. Reading any of them pulls the run forward; nothing runs
in the background.

Here the run object is a reader of the run's StreamParts (values, updates
and messages, with subgraphs): `_Reader.feed` sorts each part into the
projections of its namespace, the same code for sync and async. Only the
pull differs: `_Pull.more()` takes the next part from a sync iterator,
`_Pull.amore()` awaits it from an async one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from typing import Any, Generic, Literal, TypeVar

from flowgraph.graph._core.types import StreamPart
from flowgraph.graph._engine.run import INTERRUPT
from flowgraph.messages import AIMessage, AIMessageChunk, BaseMessage, ToolCallChunk, ToolMessage

__all__ = [
    "V3_MODES",
    "AsyncRunStream",
    "MessageStream",
    "Projection",
    "RunStream",
    "SubgraphRunStream",
    "TextProjection",
]

V3_MODES: list[Any] = ["values", "updates", "messages"]
"""The modes a v3 run streams (with subgraphs): all its projections read from."""

T = TypeVar("T")
SubgraphStatus = Literal["started", "completed", "interrupted", "failed"]


class _Pull:
    """Where the parts come from: one part more per call, fed to the reader."""

    def __init__(self, parts: Iterator[StreamPart] | AsyncIterator[StreamPart]) -> None:
        self.parts = parts
        self.reader = _Reader(self)
        self.done = False

    def more(self) -> bool:
        """Feed one more part; False once the run has ended (or failed)."""
        if self.done:
            return False
        if not isinstance(self.parts, Iterator):
            raise TypeError(
                "This run stream is async: read it with `async for` (or await its methods)"
            )
        try:
            part = next(self.parts)
        except StopIteration:
            return self._end(None)
        except Exception as exc:
            return self._end(exc)
        self.reader.feed(part)
        return True

    async def amore(self) -> bool:
        if self.done:
            return False
        if isinstance(self.parts, Iterator):
            return self.more()
        try:
            part = await anext(self.parts)
        except StopAsyncIteration:
            return self._end(None)
        except Exception as exc:
            return self._end(exc)
        self.reader.feed(part)
        return True

    def _end(self, error: Exception | None) -> bool:
        self.done = True
        self.reader.end(error)
        return False

    def close(self) -> None:
        """Stop the run (closing the parts stops it before its next step)."""
        if not self.done:
            self.done = True
            close = getattr(self.parts, "close", None)
            if close is not None:
                close()
            self.reader.end(None)

    async def aclose(self) -> None:
        if not self.done:
            self.done = True
            aclose = getattr(self.parts, "aclose", None)
            if aclose is not None:
                await aclose()
            else:
                self.close()
            self.reader.end(None)


class Projection(Generic[T]):
    """One stream of a run (LangGraph's `StreamChannel`): read once, with `for` or `async for`.

    Each item is kept until read; iterating pulls the run forward when
    none is waiting.
    """

    def __init__(self, pull: _Pull, name: str) -> None:
        self._pull = pull
        self._name = name
        self._items: deque[T] = deque()
        self._closed = False
        self._error: Exception | None = None
        self._taken = False

    lazy = False
    """LangGraph's run projections keep items only once someone reads them (a message's
    token streams keep them all)."""

    def push(self, item: T) -> None:
        if not self._closed and (self._taken or not self.lazy):
            self._items.append(item)

    def close(self, error: Exception | None = None) -> None:
        if not self._closed:
            self._closed, self._error = True, error

    def _claim(self) -> None:
        if self._taken:
            raise RuntimeError(
                f"run.{self._name} is already being read; a projection has one reader"
            )
        self._taken = True

    def _ended(self) -> bool:
        """True once closed with nothing left to read (raising the run's error, if any)."""
        if self._items or not self._closed:
            return False
        if self._error is not None:
            raise self._error
        return True

    def __iter__(self) -> Iterator[T]:
        self._claim()
        while not self._ended():
            if self._items:
                yield self._items.popleft()
            elif not self._pull.more() and not self._closed:
                return  # the run ended without closing this (not expected)

    def __aiter__(self) -> AsyncIterator[T]:
        return self._aiter()

    async def _aiter(self) -> AsyncIterator[T]:
        self._claim()
        while not self._ended():
            if self._items:
                yield self._items.popleft()
            elif not await self._pull.amore() and not self._closed:
                return


class TextProjection(Projection[str]):
    """A message's text as it arrives: iterate for the deltas, `str()` (or await) for all."""

    def __init__(self, pull: _Pull, name: str) -> None:
        super().__init__(pull, name)
        self._text: list[str] = []

    def push(self, item: str) -> None:
        if item:
            self._text.append(item)
            super().push(item)

    def get(self) -> str:
        """The whole text, once the message is complete (pulls the run that far)."""
        while not self._closed and self._pull.more():
            pass
        return "".join(self._text)

    def __str__(self) -> str:
        return self.get()

    def __bool__(self) -> bool:
        return bool(self.get())

    def __repr__(self) -> str:
        return repr("".join(self._text))

    def __await__(self) -> Generator[Any, None, str]:
        return self._whole().__await__()

    async def _whole(self) -> str:
        while not self._closed and await self._pull.amore():
            pass
        return "".join(self._text)


class MessageStream:
    """One model reply as it streams (LangGraph's `ChatModelStream`).

    `.text` and `.reasoning` are token streams, `.tool_calls` the tool-call
    chunks, `.output` the finished `AIMessage` (sync: the message; async:
    awaitable); `.node`, `.namespace` and `.message_id` say where it comes
    from.
    """

    def __init__(self, pull: _Pull, node: str | None, id: Any) -> None:
        self._pull = pull
        self.node = node
        self.namespace: list[str] = []  # LangGraph's: relative to the run that streams it
        self.message_id: str | None = id
        self.text = TextProjection(pull, "text")
        self.reasoning = TextProjection(pull, "reasoning")
        self.tool_calls: Projection[Any] = Projection(pull, "tool_calls")
        self._chunks: AIMessageChunk | None = None
        self._calls: dict[int, ToolCallChunk] = {}
        self._message: AIMessage | None = None
        self.done = False

    def add(self, chunk: AIMessageChunk) -> None:
        self._chunks = chunk if self._chunks is None else self._chunks + chunk
        self.text.push(chunk.text)
        self.reasoning.push(chunk.reasoning)
        for call in chunk.tool_call_chunks:
            # as LangGraph's: each fragment names its call (providers name it only at first)
            first = self._calls.setdefault(call.index, call)
            if call is not first and (call.id is None or call.name is None):
                call = call.model_copy(
                    update={"id": call.id or first.id, "name": call.name or first.name}
                )
            self.tool_calls.push(call)

    def finish(self, message: AIMessage | None, error: Exception | None = None) -> None:
        if self.done:
            return
        self.done = True
        if message is None and self._chunks is not None:
            message = self._chunks.to_message()
        self._message = message
        for projection in (self.text, self.reasoning, self.tool_calls):
            projection.close(error)

    @property
    def output(self) -> Any:
        """The finished reply (an awaitable of it on an async run stream)."""
        if not isinstance(self._pull.parts, Iterator):
            return self._aoutput()
        while not self.done and self._pull.more():
            pass
        return self._message

    async def _aoutput(self) -> AIMessage | None:
        while not self.done and await self._pull.amore():
            pass
        return self._message

    def __repr__(self) -> str:
        return f"MessageStream(node={self.node!r}, message_id={self.message_id!r})"


class _Scope:
    """The projections of one namespace: the run itself (`()`) or a subgraph run."""

    def __init__(self, pull: _Pull, namespace: tuple[str, ...]) -> None:
        self.namespace = namespace
        self.values: Projection[Any] = Projection(pull, "values")
        self.messages: Projection[MessageStream] = Projection(pull, "messages")
        self.subgraphs: Projection[Any] = Projection(pull, "subgraphs")
        self.lifecycle: Projection[dict[str, Any]] = Projection(pull, "lifecycle")
        """Every subgraph run below this one starting and ending (LangGraph's payloads)."""
        self.projections = (self.values, self.messages, self.subgraphs, self.lifecycle)
        self.latest: Any = None
        self.interrupts: list[Any] = []
        self.open: dict[Any, MessageStream] = {}
        """The replies still streaming, by message id."""

        self.status: SubgraphStatus = "started"
        self.error: Exception | None = None

    def finish_messages(self, node: str | None, update: Any, error: Exception | None) -> None:
        """Close the replies of `node` (None: all), taking each's message from its update."""
        stored = {}
        if isinstance(update, dict):
            for value in update.values():
                for item in value if isinstance(value, list) else (value,):
                    if isinstance(item, AIMessage) and item.id is not None:
                        stored[item.id] = item
        for key, stream in list(self.open.items()):
            if node is None or stream.node == node:
                stream.finish(stored.get(stream.message_id or ""), error)
                del self.open[key]

    def close(self, error: Exception | None) -> None:
        self.finish_messages(None, None, error)
        for projection in self.projections:
            projection.close(error)


def _returned(update: Any) -> Iterator[BaseMessage]:
    """The messages a node's update returns, but tool results (LangGraph leaves them out)."""
    if isinstance(update, dict):
        for value in update.values():
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(item, BaseMessage) and not isinstance(item, ToolMessage):
                    yield item


def _message_ids(values: Any) -> Iterator[str]:
    """The ids of the messages in the state `values` (a dict or a pydantic state)."""
    fields = values if isinstance(values, dict) else getattr(values, "__dict__", {})
    for value in fields.values():
        if isinstance(value, list) and value and isinstance(value[-1], BaseMessage):
            yield from (m.id for m in value if isinstance(m, BaseMessage) and m.id)


class _Reader:
    """Sorts a run's parts into the projections of their namespaces."""

    def __init__(self, pull: _Pull) -> None:
        self._pull = pull
        self.scopes: dict[tuple[str, ...], _Scope] = {}
        self.fresh: list[_Scope] = []
        """The scopes the last part created (see `feed`)."""
        self.streamed: set[str | None] = set()
        """Ids of the messages already streamed, in any namespace (not repeated when a node,
        or a subgraph's node in the parent, returns them)."""
        self.make_handle: Callable[[_Scope], Any] | None = None
        """Builds the handle a new subgraph run is announced with (set by the run stream)."""

    def scope(self, namespace: tuple[str, ...]) -> _Scope:
        found = self.scopes.get(namespace)
        if found is None:
            parent = self.scope(namespace[:-1]) if namespace else None
            found = self.scopes[namespace] = _Scope(self._pull, namespace)
            self.fresh.append(found)
            if parent is not None:
                # the part announcing a subgraph run is its input: LangGraph's handle
                # of it is not read yet, so its values do not keep it
                found.values.lazy = True
                graph_name = namespace[-1].partition(":")[0]
                started = {"event": "started", "namespace": list(namespace)}
                self._announce(namespace, {**started, "graph_name": graph_name})
                if self.make_handle is not None:
                    parent.subgraphs.push(self.make_handle(found))
        return found

    def _announce(self, namespace: tuple[str, ...], payload: dict[str, Any]) -> None:
        """Tell the lifecycle of every run above `namespace`."""
        if payload["event"] == "started":
            payload["trigger_call_id"] = namespace[-1].partition(":")[2] or None
        for depth in range(len(namespace)):
            self.scopes[namespace[:depth]].lifecycle.push(payload)

    def settle(self, scope: _Scope, status: SubgraphStatus, error: Exception | None) -> None:
        """A subgraph run's end: its status, told to the runs above it."""
        if scope.namespace and scope.status == "started":
            scope.status, scope.error = status, error
            payload: dict[str, Any] = {"event": status, "namespace": list(scope.namespace)}
            if error is not None:
                payload["error"] = str(error)
            self._announce(scope.namespace, payload)

    def feed(self, part: StreamPart) -> None:
        # a subgraph's handle is read before the next part, so its projections keep what
        # the part that announced it brought; from then on they are lazy, as the run's are
        for fresh in self.fresh:
            for projection in fresh.projections:
                projection.lazy = True
        self.fresh.clear()
        scope = self.scope(part.namespace)
        if part.mode == "values":
            scope.latest = part.data
            scope.values.push(part.data)
            self.streamed.update(_message_ids(part.data))  # a node's input is not returned
        elif part.mode == "messages":
            chunk = part.data
            if isinstance(chunk, AIMessageChunk):
                key = chunk.id or (part.node, part.step)
                stream = scope.open.get(key)
                if stream is None:
                    stream = scope.open[key] = MessageStream(self._pull, part.node, chunk.id)
                    scope.messages.push(stream)
                    self.streamed.add(chunk.id)
                stream.add(chunk)
        elif part.mode == "updates":
            if part.node == INTERRUPT:
                if part.namespace:  # a subgraph's own pause: its graph above says it too
                    return
                scope.interrupts.extend(part.data)
                scope.values.push(scope.latest)  # LangGraph's last values part carries them
                # the run paused: a subgraph run started under this one and not finished
                # paused with it (and so did the graphs above a subgraph that paused)
                depth = len(part.namespace)
                for namespace, child in sorted(self.scopes.items(), key=lambda kv: -len(kv[0])):
                    if len(namespace) > depth and namespace[:depth] == part.namespace:
                        if child.status == "started" and child.latest is not None:
                            child.values.push(child.latest)  # its last values part, as above
                        self.settle(child, "interrupted", None)
                for above in range(depth, 0, -1):
                    self.settle(self.scope(part.namespace[:above]), "interrupted", None)
                return
            scope.finish_messages(part.node, part.data, None)
            for message in _returned(part.data):
                if message.id is None or message.id not in self.streamed:
                    self.streamed.add(message.id)
                    stream = MessageStream(self._pull, part.node, message.id)
                    stream.text.push(message.text)
                    if not isinstance(message, AIMessage):
                        message = AIMessage(message.text, id=message.id)
                    stream.finish(message)
                    scope.messages.push(stream)
            for namespace, child in list(self.scopes.items()):
                if (
                    namespace[:-1] == part.namespace
                    and namespace
                    and namespace[-1].split(":", 1)[0] == part.node
                    and child.status == "started"
                ):
                    self.settle(child, "completed", None)
                    child.close(None)

    def end(self, error: Exception | None) -> None:
        root = self.scope(())
        for scope in sorted(self.scopes.values(), key=lambda s: -len(s.namespace)):
            if scope is not root:
                self.settle(scope, "failed" if error is not None else "completed", error)
                scope.close(error)
        root.close(error)


class RunStream:
    """What `stream_events(..., version="v3")` returns (LangGraph's `GraphRunStream`).

    Read `.values`, `.messages` or `.subgraphs` (once each), or ask
    `.output`, `.interrupted`, `.interrupts`, which run the graph to its
    end. Leaving a `with` block, or `abort()`, stops the run.
    """

    def __init__(self, pull: _Pull, scope: _Scope) -> None:
        self._pull = pull
        self._scope = scope
        self.values = scope.values
        self.messages = scope.messages
        self.subgraphs = scope.subgraphs
        self.lifecycle = scope.lifecycle
        self.extensions = {
            "values": scope.values,
            "messages": scope.messages,
            "subgraphs": scope.subgraphs,
            "lifecycle": scope.lifecycle,
        }

    @classmethod
    def start(cls, parts: Iterator[StreamPart] | AsyncIterator[StreamPart]) -> Any:
        pull = _Pull(parts)
        handle = SubgraphRunStream if isinstance(parts, Iterator) else AsyncSubgraphRunStream
        pull.reader.make_handle = lambda scope: handle(pull, scope)
        return cls(pull, pull.reader.scope(()))

    def _drain(self) -> None:
        while self._pull.more():
            pass
        if self._scope.error is not None:
            raise self._scope.error

    @property
    def output(self) -> Any:
        """The state when the run ended (runs it to the end)."""
        self._drain()
        return self._scope.latest

    @property
    def interrupted(self) -> bool:
        """Whether the run paused at an interrupt (runs it to the end)."""
        self._drain()
        return bool(self._scope.interrupts)

    @property
    def interrupts(self) -> list[Any]:
        """The interrupts the run paused at (runs it to the end)."""
        self._drain()
        return self._scope.interrupts

    def abort(self) -> None:
        """Stop the run before its next step."""
        self._pull.close()

    def __enter__(self) -> RunStream:
        return self

    def __exit__(self, *_: object) -> None:
        self.abort()


class AsyncRunStream(RunStream):
    """What `await astream_events(..., version="v3")` returns: the same projections, read
    with `async for`; `output()`, `interrupted()` and `interrupts()` are awaited."""

    async def _adrain(self) -> None:
        while await self._pull.amore():
            pass
        if self._scope.error is not None:
            raise self._scope.error

    async def output(self) -> Any:
        await self._adrain()
        return self._scope.latest

    async def interrupted(self) -> bool:  # type: ignore[override]
        await self._adrain()
        return bool(self._scope.interrupts)

    async def interrupts(self) -> list[Any]:  # type: ignore[override]
        await self._adrain()
        return self._scope.interrupts

    async def abort(self) -> None:  # type: ignore[override]
        await self._pull.aclose()

    async def __aenter__(self) -> AsyncRunStream:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.abort()


class _Subgraph:
    """What a subgraph run's handle tells besides its projections."""

    _scope: _Scope

    @property
    def path(self) -> tuple[str, ...]:
        """Its namespace: `("node:<task id>", ...)`, one entry per level."""
        return self._scope.namespace

    @property
    def graph_name(self) -> str:
        """The parent's node that runs it."""
        return self._scope.namespace[-1].split(":", 1)[0]

    @property
    def trigger_call_id(self) -> str | None:
        """The id of the task that runs it."""
        _, _, task = self._scope.namespace[-1].partition(":")
        return task or None

    @property
    def status(self) -> SubgraphStatus:
        """ "started", then "completed", "interrupted" or "failed"."""
        return self._scope.status

    @property
    def error(self) -> str | None:
        return None if self._scope.error is None else str(self._scope.error)


class SubgraphRunStream(_Subgraph, RunStream):
    """A subgraph run seen from `run.subgraphs`: its own projections, and where it runs."""

    def _drain(self) -> None:
        while self._scope.status == "started" and self._pull.more():
            pass


class AsyncSubgraphRunStream(_Subgraph, AsyncRunStream):
    """`SubgraphRunStream` on an async run stream."""

    async def _adrain(self) -> None:
        while self._scope.status == "started" and await self._pull.amore():
            pass
