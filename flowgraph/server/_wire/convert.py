"""What goes over the wire: LangChain-shaped message dicts, JSON values, times and states.

A UI written for LangGraph Server renders messages as LangChain serializes
them (`type` human/ai/tool/system, `content`, `tool_calls` with `args`,
`usage_metadata`, `additional_kwargs`, ...), so flowgraph messages are
written in that shape and read back from it (or from OpenAI role dicts,
which the SDK examples send). A message's own `metadata` travels in
`additional_kwargs["metadata"]` so it survives the round trip.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from flowgraph.errors import InvalidMessageError
from flowgraph.graph import END, Command, Interrupt, Send, StateSnapshot
from flowgraph.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    ReasoningPart,
    RemoveMessage,
    TextPart,
    ToolCallChunk,
    ToolCallPart,
    ToolMessage,
    Usage,
    coerce_message,
    to_openai,
)
from flowgraph.messages._repr import usage_dict
from flowgraph.server._wire.responses import ApiError

if TYPE_CHECKING:
    from flowgraph.server._records.registry import RunRecord

__all__ = [
    "checkpoint_ref",
    "chunk_to_wire",
    "command_from_wire",
    "input_from_wire",
    "interrupt_to_wire",
    "iso",
    "message_from_wire",
    "message_to_wire",
    "run_json",
    "snapshot_to_wire",
    "state_to_wire",
    "task_id",
    "to_wire",
]

_CHUNK_TYPES = {
    "AIMessageChunk": "ai",
    "HumanMessageChunk": "human",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
}
_TASK_NAMESPACE = uuid.UUID("2a1f2f7e-7c4b-4f1e-9d7c-0f6a5b3c2d1e")


def iso(timestamp: float | None) -> str | None:
    """Unix seconds as ISO 8601 with the UTC offset, as LangGraph Server writes times."""
    if timestamp is None:
        return None
    return dt.datetime.fromtimestamp(timestamp, tz=dt.UTC).isoformat()


# -- flowgraph -> wire ------------------------------------------------------------


def _content(message: BaseMessage) -> str | list[Any]:
    content = message.content
    if isinstance(content, str):
        return content
    parts = [p for p in content if not isinstance(p, (ToolCallPart, ReasoningPart))]
    if all(isinstance(p, TextPart) for p in parts):
        return "".join(p.text for p in parts if isinstance(p, TextPart))
    wired: list[Any] = to_openai(HumanMessage(content=parts))["content"]
    return wired


def _usage(usage: Usage | None) -> dict[str, Any] | None:
    """LangChain's `usage_metadata`, as a printed message shows it."""
    return None if usage is None else usage_dict(usage)


def message_to_wire(message: BaseMessage | RemoveMessage) -> dict[str, Any]:
    """A flowgraph message as LangChain serializes the same message."""
    if isinstance(message, RemoveMessage):
        return {"type": "remove", "id": message.id, "content": ""}
    extra: dict[str, Any] = {}
    if message.metadata:
        extra["metadata"] = to_wire(message.metadata)
    out: dict[str, Any] = {
        "content": _content(message),
        "additional_kwargs": extra,
        "response_metadata": {},
        "type": message.type,
        "name": message.name,
        "id": message.id,
    }
    if isinstance(message, AIMessage):
        if message.reasoning:
            extra["reasoning_content"] = message.reasoning
        out["response_metadata"] = to_wire(message.response_metadata)
        out["tool_calls"] = [
            {"name": c.name, "args": to_wire(c.args), "id": c.id, "type": "tool_call"}
            for c in message.tool_calls
        ]
        out["invalid_tool_calls"] = [
            {
                "name": c.name,
                "args": c.args,
                "id": c.id,
                "error": c.error,
                "type": "invalid_tool_call",
            }
            for c in message.invalid_tool_calls
        ]
        out["usage_metadata"] = _usage(message.usage)
    elif isinstance(message, ToolMessage):
        out["tool_call_id"] = message.tool_call_id
        out["artifact"] = to_wire(message.artifact)
        out["status"] = message.status
    return out


def chunk_to_wire(chunk: AIMessageChunk) -> dict[str, Any]:
    """A streamed token chunk as LangChain's `AIMessageChunk` dict."""
    text = "".join(p.text for p in chunk.content_blocks if isinstance(p, TextPart))
    reasoning = "".join(p.text for p in chunk.content_blocks if isinstance(p, ReasoningPart))
    calls = [p for p in chunk.content_blocks if isinstance(p, ToolCallChunk)]
    extra: dict[str, Any] = {"reasoning_content": reasoning} if reasoning else {}
    return {
        "content": text,
        "additional_kwargs": extra,
        "response_metadata": to_wire(chunk.response_metadata),
        "type": "AIMessageChunk",
        "name": chunk.name,
        "id": chunk.id,
        "tool_calls": [],
        "invalid_tool_calls": [],
        "usage_metadata": _usage(chunk.usage),
        "tool_call_chunks": [
            {
                "name": c.name,
                "args": c.args,
                "id": c.id,
                "index": c.index,
                "type": "tool_call_chunk",
            }
            for c in calls
        ],
    }


def interrupt_to_wire(interrupt: Interrupt) -> dict[str, Any]:
    return {"value": to_wire(interrupt.value), "id": interrupt.id}


def snapshot_to_wire(snapshot: StateSnapshot) -> Any:
    """A thread's values as a run's result: `__interrupt__` added when it is paused there.

    A paused run whose state is not an object (an `@entrypoint`'s) gives just
    `{"__interrupt__": [...]}`, as LangGraph Server answers.
    """
    values = to_wire(snapshot.values) if snapshot.checkpoint_id else {}
    if snapshot.interrupts:
        kept = values if isinstance(values, dict) else {}
        values = {**kept, "__interrupt__": [interrupt_to_wire(i) for i in snapshot.interrupts]}
    return values


def to_wire(value: Any) -> Any:
    """Any state value as JSON-able data; messages in LangChain's shape, wherever they sit."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (BaseMessage, RemoveMessage)):
        return message_to_wire(value)
    if isinstance(value, Mapping):
        return {str(k): to_wire(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_wire(v) for v in value]
    if isinstance(value, AIMessageChunk):
        return chunk_to_wire(value)
    if isinstance(value, Interrupt):
        return interrupt_to_wire(value)
    if isinstance(value, BaseModel):
        return {name: to_wire(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def run_json(run: RunRecord) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "thread_id": run.thread_id,
        "assistant_id": run.assistant_id,
        "created_at": iso(run.created_at),
        "updated_at": iso(run.updated_at),
        "status": run.status,
        "metadata": run.metadata,
        "kwargs": run.kwargs,
        "multitask_strategy": run.multitask_strategy,
        "cancel_reason": None,
    }


def task_id(checkpoint_id: str | None, node: str, index: int) -> str:
    """A stable id for the task that runs `node` after a checkpoint (LangGraph shows one)."""
    return str(uuid.uuid5(_TASK_NAMESPACE, f"{checkpoint_id}:{node}:{index}"))


def checkpoint_ref(thread_id: str, checkpoint_id: str | None) -> dict[str, Any] | None:
    if checkpoint_id is None:
        return None
    return {
        "thread_id": thread_id,
        "checkpoint_ns": "",
        "checkpoint_id": checkpoint_id,
        "checkpoint_map": None,
    }


def state_to_wire(
    thread_id: str, snapshot: StateSnapshot, extra_metadata: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A StateSnapshot as LangGraph Server's ThreadState."""
    tasks = []
    for index, node in enumerate(snapshot.next):
        waiting = [
            interrupt_to_wire(i)
            for i in snapshot.interrupts
            if i.node == node or i.node.split("/", 1)[0] == node
        ]
        tasks.append(
            {
                "id": task_id(snapshot.checkpoint_id, node, index),
                "name": node,
                "path": ["__pregel_pull", node],
                "error": None,
                "interrupts": waiting,
                "checkpoint": None,
                "state": None,
                "result": None,
            }
        )
    metadata = None
    if snapshot.checkpoint_id is not None:
        metadata = {
            **(extra_metadata or {}),
            **to_wire(snapshot.metadata),
            "step": snapshot.step,
            "thread_id": thread_id,
            "parents": {},
        }
    return {
        "values": to_wire(snapshot.values) if snapshot.checkpoint_id is not None else {},
        "next": list(snapshot.next),
        "tasks": tasks,
        "metadata": metadata,
        "created_at": iso(snapshot.created_at),
        "checkpoint": checkpoint_ref(thread_id, snapshot.checkpoint_id)
        or {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": None},
        "parent_checkpoint": checkpoint_ref(thread_id, snapshot.parent_id),
        "interrupts": [interrupt_to_wire(i) for i in snapshot.interrupts],
        "checkpoint_id": snapshot.checkpoint_id,
        "parent_checkpoint_id": snapshot.parent_id,
    }


# -- wire -> flowgraph ------------------------------------------------------------


def message_from_wire(value: Any) -> AnyMessage:
    """A message from a LangChain dict, an OpenAI role dict, a [role, content] pair or text."""
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str):
        value = (value[0], value[1])
    if not isinstance(value, Mapping):
        return coerce_message(value)
    kind = value.get("type")
    kind = _CHUNK_TYPES.get(kind, kind) if isinstance(kind, str) else None
    if kind is None or kind not in ("human", "ai", "system", "tool", "remove"):
        return coerce_message(value)  # a role dict, or a clear error naming the keys
    if kind == "remove":
        return coerce_message({"type": "remove", "id": value.get("id")})
    role = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}[kind]
    data: dict[str, Any] = {"role": role, "content": value.get("content", "")}
    for key in ("id", "name"):
        if value.get(key) is not None:
            data[key] = value[key]
    extra = value.get("additional_kwargs")
    if isinstance(extra, Mapping) and isinstance(extra.get("metadata"), Mapping):
        data["metadata"] = dict(extra["metadata"])
    if kind == "ai":
        calls = value.get("tool_calls") or []
        if calls:
            data["tool_calls"] = [
                {"id": c.get("id"), "name": c.get("name"), "args": c.get("args") or {}}
                for c in calls
                if isinstance(c, Mapping)
            ]
        invalid = value.get("invalid_tool_calls") or []
        if invalid:
            data["invalid_tool_calls"] = [
                {k: c.get(k) for k in ("id", "name", "args", "error") if c.get(k) is not None}
                for c in invalid
                if isinstance(c, Mapping)
            ]
        usage = value.get("usage_metadata")
        if isinstance(usage, Mapping):
            data["usage"] = {
                k: usage[k]
                for k in ("input_tokens", "output_tokens", "total_tokens")
                if isinstance(usage.get(k), int)
            }
        metadata = value.get("response_metadata")
        if isinstance(metadata, Mapping) and metadata:
            data["response_metadata"] = dict(metadata)
    elif kind == "tool":
        data["tool_call_id"] = value.get("tool_call_id")
        if value.get("status") in ("success", "error"):
            data["status"] = value["status"]
        if value.get("artifact") is not None:
            data["artifact"] = value["artifact"]
    return coerce_message(data)


def input_from_wire(values: Any, message_fields: frozenset[str], where: str) -> Any:
    """A run's input or state update with its message fields turned into messages.

    A bad message is a 422 naming where it sits (`input.messages[1]`).
    """
    if not isinstance(values, Mapping):
        return values
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key not in message_fields or value is None:
            out[key] = value
            continue
        items: Sequence[Any] = value if isinstance(value, list) else [value]
        converted = []
        for index, item in enumerate(items):
            try:
                converted.append(message_from_wire(item))
            except (InvalidMessageError, ValueError, TypeError) as exc:
                raise ApiError(
                    422, f"Field '{where}.{key}[{index}]' is not a message: {exc}"
                ) from None
        out[key] = converted
    return out


def command_from_wire(
    command: Mapping[str, Any], message_fields: frozenset[str], nodes: Collection[str]
) -> Command[Any] | None:
    """A run's `command` (`resume`, `update`, `goto`) as the engine's Command; 422s name fields.

    `update` is an object of state fields or a list of [field, value] pairs;
    `goto` a node name, a Send (`{"node": ..., "input": ...}`) or a list of
    them, as LangGraph Server reads them. None when the command asks nothing.
    """
    update = command.get("update")
    if update is None:
        pass
    elif isinstance(update, Mapping):
        update = input_from_wire(update, message_fields, "command.update")
    elif isinstance(update, list) and all(
        isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) for pair in update
    ):
        update = [
            next(iter(input_from_wire({k: v}, message_fields, f"command.update[{i}]").items()))
            for i, (k, v) in enumerate(update)
        ]
    else:
        raise ApiError(
            422, "Field 'command.update' must be an object of state fields or a list of "
            "[field, value] pairs"
        )  # fmt: skip
    goto = command.get("goto")
    targets: list[str | Send] = []
    for index, target in enumerate(goto if isinstance(goto, list) else [goto] if goto else []):
        where = f"command.goto[{index}]" if isinstance(goto, list) else "command.goto"
        if isinstance(target, Mapping) and isinstance(target.get("node"), str):
            node, arg = target["node"], input_from_wire(target.get("input"), message_fields, where)
        elif isinstance(target, str):
            node, arg = target, None
        else:
            raise ApiError(
                422, f"Field '{where}' must be a node name or a Send ({{\"node\": ..., "
                "\"input\": ...}})"
            )  # fmt: skip
        if node not in nodes and node != END:
            listed = ", ".join(sorted(nodes))
            raise ApiError(
                422, f"Field '{where}' names {node!r}, which is not a node; nodes: {listed}"
            )
        targets.append(Send(node, arg) if isinstance(target, Mapping) else node)
    if update is None and not targets and "resume" not in command:
        return None
    if "resume" in command:
        return Command(update=update, goto=targets, resume=command["resume"])
    return Command(update=update, goto=targets)
