"""A run's stream as LangGraph Server sends it: SSE events named and shaped per stream mode.

The engine streams `StreamPart`s (values, updates, messages, events); this
module turns them into the events a LangGraph client reads:

- `values` and `updates` as they are, with a pause adding `__interrupt__`;
- `messages-tuple`: event `messages`, `[message chunk, metadata]` per token,
  and a node's returned AI/tool messages whole (those not streamed already);
- `messages`: `messages/metadata` once per message, then `messages/partial`
  (the message so far) per token, `messages/complete` for a returned one;
- `events`: LangChain's astream_events v2 records (on_chain_start / end per
  run and node, on_chat_model_stream per token);
- `debug`: `checkpoint`, `task` and `task_result` records; `custom`: what a
  node sends with `get_stream_writer()`.

With `stream_subgraphs`, the steps of subgraph nodes are sent too, their
events named with the subgraph's namespace (`updates|child:<task id>`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from flowgraph.graph import StreamPart
from flowgraph.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from flowgraph.server._wire.convert import (
    chunk_to_wire,
    interrupt_to_wire,
    message_to_wire,
    task_id,
    to_wire,
)
from flowgraph.server._wire.responses import dumps

__all__ = ["STREAM_MODES", "Translator", "encode_sse", "engine_modes"]

_NAMESPACED = frozenset({"values", "updates", "custom", "debug", "messages"})
"""The events a subgraph's part is sent as with its namespace (`updates|child:<task id>`)."""

STREAM_MODES = frozenset(
    {"values", "updates", "messages", "messages-tuple", "events", "debug", "custom"}
)
"""The stream modes this server serves; any other is a 422 naming it."""


def encode_sse(event: str, data: bytes, event_id: str | None = None) -> bytes:
    """One SSE event (CRLF line ends, as LangGraph Server writes them)."""
    clean = event.replace("\r", "").replace("\n", "")
    out = b"event: " + clean.encode() + b"\r\ndata: " + data + b"\r\n"
    if event_id is not None:
        out += b"id: " + event_id.encode() + b"\r\n"
    return out + b"\r\n"


def engine_modes(modes: Iterable[str]) -> list[str]:
    """The engine modes a run streams to serve the client's modes (values always: results)."""
    wanted = set(modes)
    out = {"values", "updates"}
    if wanted & {"messages", "messages-tuple", "events"}:
        out.add("messages")
    if wanted & {"events", "debug"}:
        out.add("events")
    if "custom" in wanted:
        out.add("custom")
    return sorted(out)


def _now() -> str:
    return dt.datetime.now(tz=dt.UTC).isoformat()


@dataclass(slots=True)
class Translator:
    """Turns one run's StreamParts into (event, JSON bytes) pairs for the modes asked."""

    modes: frozenset[str]
    run_id: str
    thread_id: str
    graph_id: str
    assistant_id: str
    run_metadata: dict[str, Any] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    """The last state seen (wire form), for `__interrupt__` values and final results."""
    seen: set[str] = field(default_factory=set)
    partial: dict[str, AIMessageChunk] = field(default_factory=dict)
    interrupts: list[dict[str, Any]] = field(default_factory=list)

    def _meta(self, node: str | None, step: int, namespace: tuple[str, ...] = ()) -> dict[str, Any]:
        node = node or ""
        own = f"{node}:{task_id(self.run_id, node, step)}"
        return {
            **self.run_metadata,
            "graph_id": self.graph_id,
            "assistant_id": self.assistant_id,
            "run_id": self.run_id,
            "thread_id": self.thread_id,
            "langgraph_step": step,
            "langgraph_node": node,
            "langgraph_triggers": [f"branch:to:{node}"],
            "langgraph_path": ["__pregel_pull", node],
            "langgraph_checkpoint_ns": "|".join((*namespace, own)),
        }

    def start(self, input_value: Any) -> list[tuple[str, Any]]:
        if "events" not in self.modes:
            return []
        return [
            (
                "events",
                {
                    "event": "on_chain_start",
                    "data": {"input": input_value},
                    "name": self.graph_id,
                    "tags": [],
                    "run_id": self.run_id,
                    "metadata": {
                        **self.run_metadata,
                        "thread_id": self.thread_id,
                        "run_id": self.run_id,
                    },
                    "parent_ids": [],
                },
            )
        ]

    def finish(self) -> list[tuple[str, Any]]:
        if "events" not in self.modes:
            return []
        return [
            (
                "events",
                {
                    "event": "on_chain_end",
                    "data": {"output": self.values},
                    "run_id": self.run_id,
                    "name": self.graph_id,
                    "tags": [],
                    "metadata": {
                        **self.run_metadata,
                        "thread_id": self.thread_id,
                        "run_id": self.run_id,
                    },
                    "parent_ids": [],
                },
            )
        ]

    def feed(self, part: StreamPart) -> list[tuple[str, Any]]:
        if part.namespace:
            return self._nested(part)
        return self._dispatch(part)

    def _dispatch(self, part: StreamPart) -> list[tuple[str, Any]]:
        mode = part.mode
        if mode == "values":
            return self._values(part)
        if mode == "updates":
            return self._updates(part)
        if mode == "messages":
            return self._token(part)
        if mode == "events":
            return self._task_event(part)
        if str(mode) == "custom" and "custom" in self.modes:
            return [("custom", to_wire(part.data))]
        return []

    def _nested(self, part: StreamPart) -> list[tuple[str, Any]]:
        """A subgraph's part (`stream_subgraphs`): its events named `mode|node:task|...`.

        As LangGraph Server names them: values, updates, custom, debug and the
        `messages` of messages-tuple carry the namespace; messages/* and events
        do not. A subgraph's state is not the run's (`values` stays the parent's).
        """
        suffix = "|" + "|".join(part.namespace)
        if part.mode == "values":
            out = self._state_events(to_wire(part.data), part.step)
        else:
            out = self._dispatch(part)
        return [
            (f"{event}{suffix}" if event in _NAMESPACED else event, data) for event, data in out
        ]

    def _values(self, part: StreamPart) -> list[tuple[str, Any]]:
        self.values = to_wire(part.data)
        for messages in _message_lists(part.data):
            self.seen.update(m.id for m in messages if m.id)
        return self._state_events(self.values, part.step)

    def _state_events(self, values: Any, step: int) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        if "values" in self.modes:
            out.append(("values", values))
        if "debug" in self.modes:
            out.append(
                (
                    "debug",
                    {
                        "step": step,
                        "timestamp": _now(),
                        "type": "checkpoint",
                        "payload": {
                            "values": values,
                            "metadata": {"step": step, "run_id": self.run_id},
                            "next": [],
                            "tasks": [],
                            "checkpoint": None,
                            "parent_checkpoint": None,
                        },
                    },
                )
            )
        return out

    def _updates(self, part: StreamPart) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        node = part.node or ""
        if node == "__interrupt__":
            self.interrupts = [interrupt_to_wire(i) for i in part.data]
            if "updates" in self.modes:
                out.append(("updates", {"__interrupt__": self.interrupts}))
            if "values" in self.modes:
                out.append(("values", {**self.values, "__interrupt__": self.interrupts}))
            return out
        update = part.data if isinstance(part.data, dict) else {}
        wired = to_wire(update)
        if "updates" in self.modes:
            out.append(("updates", {node: wired}))
        if self.modes & {"messages", "messages-tuple"}:
            meta = self._meta(node, part.step, part.namespace)
            for messages in _message_lists(update):
                for message in messages:
                    if not isinstance(message, (AIMessage, ToolMessage)) or message.id in self.seen:
                        continue
                    if message.id:
                        self.seen.add(message.id)
                    out.extend(self._whole_message(message, meta))
        if "debug" in self.modes:
            out.append(
                (
                    "debug",
                    {
                        "step": part.step,
                        "timestamp": _now(),
                        "type": "task_result",
                        "payload": {
                            "id": task_id(self.run_id, node, part.step),
                            "name": node,
                            "error": None,
                            "result": wired,
                            "interrupts": [],
                        },
                    },
                )
            )
        if "events" in self.modes:
            out.append(
                ("events", self._node_event("on_chain_stream", node, part.step, {"chunk": wired}))
            )
        return out

    def _whole_message(self, message: BaseMessage, meta: dict[str, Any]) -> list[tuple[str, Any]]:
        wired = message_to_wire(message)
        out: list[tuple[str, Any]] = []
        if "messages-tuple" in self.modes:
            out.append(("messages", [wired, meta]))
        if "messages" in self.modes:
            out.append(("messages/metadata", {message.id: {"metadata": meta}}))
            out.append(("messages/complete", [wired]))
        return out

    def _token(self, part: StreamPart) -> list[tuple[str, Any]]:
        chunk = part.data
        if not isinstance(chunk, AIMessageChunk):
            return []
        out: list[tuple[str, Any]] = []
        meta = self._meta(part.node, part.step, part.namespace)
        wired = chunk_to_wire(chunk)
        if chunk.id:
            self.seen.add(chunk.id)
        if "messages-tuple" in self.modes:
            out.append(("messages", [wired, meta]))
        if "messages" in self.modes:
            key = chunk.id or ""
            if key not in self.partial:
                self.partial[key] = chunk
                out.append(("messages/metadata", {key: {"metadata": meta}}))
            else:
                self.partial[key] = self.partial[key] + chunk
            out.append(("messages/partial", [chunk_to_wire(self.partial[key])]))
        if "events" in self.modes:
            event = self._node_event(
                "on_chat_model_stream", part.node or "", part.step, {"chunk": wired}
            )
            event["name"] = "model"
            out.append(("events", event))
        return out

    def _task_event(self, part: StreamPart) -> list[tuple[str, Any]]:
        data = part.data if isinstance(part.data, dict) else {}
        kind = data.get("event")
        node = part.node or ""
        out: list[tuple[str, Any]] = []
        if kind == "start":
            if "debug" in self.modes:
                out.append(
                    (
                        "debug",
                        {
                            "step": part.step,
                            "timestamp": _now(),
                            "type": "task",
                            "payload": {
                                "id": task_id(self.run_id, node, part.step),
                                "name": node,
                                "input": self.values,
                                "triggers": [f"branch:to:{node}"],
                            },
                        },
                    )
                )
            if "events" in self.modes:
                out.append(
                    (
                        "events",
                        self._node_event("on_chain_start", node, part.step, {"input": self.values}),
                    )
                )
        elif kind in ("end", "error") and "events" in self.modes:
            payload = {"error": data.get("error")} if kind == "error" else {}
            out.append(("events", self._node_event("on_chain_end", node, part.step, payload)))
        return out

    def _node_event(self, event: str, node: str, step: int, data: dict[str, Any]) -> dict[str, Any]:
        return {
            "event": event,
            "data": data,
            "name": node,
            "tags": [f"graph:step:{step}"],
            "run_id": task_id(self.run_id, node, step),
            "metadata": self._meta(node, step),
            "parent_ids": [self.run_id],
        }


def _message_lists(values: Any) -> list[list[BaseMessage]]:
    """The lists of messages among a state's or update's fields."""
    items = values.items() if isinstance(values, dict) else getattr(values, "__dict__", {}).items()
    found = []
    for _, value in items:
        if isinstance(value, list) and value and isinstance(value[0], BaseMessage):
            found.append([m for m in value if isinstance(m, BaseMessage)])
    return found


def event_bytes(data: Any) -> bytes:
    return dumps(data)
