"""LangGraph's shapes of stream items, for `stream(..., stream_mode=...)`.

flowgraph streams `StreamPart`s. A program ported from LangGraph iterates
what LangGraph yields instead: a dict per step for "updates" and "values",
a `(message, metadata)` pair for "messages", the written value for
"custom"; `(mode, chunk)` when the modes are given as a list; and the
namespace in front with `subgraphs=True`; with `version="v2"` each item
is LangGraph 1.1's typed part, a dict `{"type", "ns", "data"}` ("values"
adds `"interrupts"`). This module turns the one into the other, as a reader
of the parts: the engine runs the same either way.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from flowgraph.graph._core.types import STREAM_MODES, StreamMode, StreamPart
from flowgraph.graph._engine.run import INTERRUPT
from flowgraph.messages import BaseMessage

__all__ = ["LangGraphItems", "StreamVersion", "fields_of", "with_interrupts"]

StreamVersion = Literal["v1", "v2"]

_KNOWN = STREAM_MODES
_ELSEWHERE = {
    "debug": 'mode="events" (node start, end and error, with durations)',
    "tasks": 'mode="events" (node start, end and error, with durations)',
    "checkpoints": "get_state_history() after the run",
}


def fields_of(values: Any) -> Any:
    """A pydantic state as LangGraph's v1 stream gives it: a dict of its fields."""
    if isinstance(values, BaseModel):  # a field left unset (MessagesState's) is not shown
        fields = values.__dict__
        return {name: fields[name] for name in type(values).model_fields if name in fields}
    return values


def with_interrupts(values: Any, interrupts: tuple[Any, ...]) -> dict[str, Any]:
    """The state as a dict with LangGraph's `"__interrupt__"` key added."""
    values = fields_of(values)
    # an entrypoint that has returned nothing yet (None), or a plain value: no fields
    fields = dict(values) if isinstance(values, Mapping) else {}
    fields[INTERRUPT] = interrupts
    return fields


class LangGraphItems:
    """Turns one run's StreamParts into the items LangGraph's `stream()` yields.

    "messages" also yields the messages a node returns without having
    streamed them (a ToolNode's results, a hand-made AIMessage), once each,
    when its step ends, as LangGraph does; for that it reads the "updates"
    parts even when they are not asked for, and the "values" parts, whose
    messages (a node's input) are not sent again. A pause yields `{"__interrupt__":
    (...)}` in "updates" and, for an `interrupt()`, the state with that key
    in "values".
    """

    def __init__(
        self,
        stream_mode: StreamMode | Sequence[StreamMode],
        *,
        subgraphs: bool,
        thread_id: str | None,
        version: StreamVersion = "v1",
    ) -> None:
        if version not in ("v1", "v2"):
            raise ValueError(
                f"stream(version={version!r}): use 'v1' (LangGraph's dicts and tuples) or "
                "'v2' (typed parts); stream_events(version='v3') gives the projections"
            )
        self.version = version
        names = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)
        for name in names:
            if name in _ELSEWHERE:
                raise ValueError(
                    f"stream_mode={name!r} is LangGraph's; flowgraph has {_ELSEWHERE[name]}"
                )
            if name not in _KNOWN:
                raise ValueError(
                    f"Unknown stream mode {name!r}; use one or more of {sorted(_KNOWN)}"
                )
        if not names:
            raise ValueError(f"stream_mode=[] asks for nothing; use some of {sorted(_KNOWN)}")
        self.modes = frozenset(names)
        self.paired = not isinstance(stream_mode, str)
        """A list of modes (even of one): items are (mode, chunk) pairs."""
        self.subgraphs = subgraphs
        self.thread_id = thread_id
        self.engine_modes = (
            self.modes | {"updates", "values"} if "messages" in self.modes else self.modes
        )
        self._streamed: set[str] = set()
        """Ids of the messages whose chunks were streamed: not sent again whole."""
        self._values: dict[tuple[str, ...], Any] = {}
        """The last "values" chunk of each namespace (a pause adds its interrupts to it)."""

    def feed(self, part: StreamPart) -> Iterator[Any]:
        """The items one part stands for (none, one, or several)."""
        mode = part.mode
        modes = self.modes
        if mode == "updates":
            if part.node == INTERRUPT:
                interrupts = tuple(part.data)
                if "updates" in modes:
                    yield self._item(part, "updates", {INTERRUPT: interrupts})
                if "values" in modes and interrupts:
                    values = self._values.get(part.namespace)
                    if self.version == "v2":
                        yield self._typed(part, "values", values, interrupts)
                    else:
                        yield self._item(part, "values", with_interrupts(values, interrupts))
                return
            if "messages" in modes:
                for message in self._unstreamed(part.data):
                    yield self._item(part, "messages", (message, self._metadata(part)))
            if "updates" in modes:
                update: dict[str, Any] = {str(part.node): part.data}
                if part.cached:
                    update["__metadata__"] = {"cached": True}
                yield self._item(part, "updates", update)
        elif mode == "messages":
            message_id = getattr(part.data, "id", None)
            if message_id:
                self._streamed.add(message_id)
            yield self._item(part, "messages", (part.data, self._metadata(part)))
        else:
            if mode == "values":
                if "messages" in modes:
                    self._seen(part.data)
                if "values" not in modes:
                    return
                self._values[part.namespace] = part.data
                if self.version == "v2":
                    yield self._typed(part, "values", part.data, ())
                    return
                yield self._item(part, mode, fields_of(part.data))
                return
            yield self._item(part, mode, part.data)

    async def translate(self, parts: AsyncGenerator[StreamPart, None]) -> AsyncIterator[Any]:
        """`parts` as LangGraph's items; closing this closes `parts` (and stops the run)."""
        try:
            async for part in parts:
                for item in self.feed(part):
                    yield item
        finally:
            await parts.aclose()

    def _item(self, part: StreamPart, mode: str, chunk: Any) -> Any:
        if self.version == "v2":
            return {"type": mode, "ns": part.namespace, "data": chunk}
        if self.subgraphs:
            return (part.namespace, mode, chunk) if self.paired else (part.namespace, chunk)
        return (mode, chunk) if self.paired else chunk

    @staticmethod
    def _typed(
        part: StreamPart, mode: str, values: Any, interrupts: tuple[Any, ...]
    ) -> dict[str, Any]:
        """A v2 "values" part: the state in the schema's type, its interrupts apart."""
        return {"type": mode, "ns": part.namespace, "data": values, "interrupts": interrupts}

    def _seen(self, values: Any) -> None:
        """The messages in the state are known: a node that hands them back (a subgraph's
        whole state) does not stream them again, as LangGraph skips a node's input."""
        for value in fields_of(values).values() if values is not None else ():
            if isinstance(value, list) and value and isinstance(value[-1], BaseMessage):
                self._streamed.update(m.id for m in value if isinstance(m, BaseMessage) and m.id)

    def _unstreamed(self, update: Any) -> Iterator[BaseMessage]:
        """The messages in a node's update that were not streamed as chunks (each once)."""
        if not isinstance(update, Mapping):
            return
        for value in update.values():
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(item, BaseMessage) and item.id not in self._streamed:
                    if item.id is not None:
                        self._streamed.add(item.id)
                    yield item

    def _metadata(self, part: StreamPart) -> dict[str, Any]:
        """LangGraph's keys for where a message came from."""
        metadata: dict[str, Any] = {
            "langgraph_step": part.step,
            "langgraph_node": part.node,
            "langgraph_checkpoint_ns": "|".join((*part.namespace, part.node or "")),
        }
        if self.thread_id is not None:
            metadata["thread_id"] = self.thread_id
        if part.metadata:  # the node's add_node(metadata=...), over LangGraph's keys
            metadata.update(part.metadata)
        return metadata
