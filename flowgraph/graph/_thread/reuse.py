"""A branch does not repeat what its origin already did in the world: finished tool calls.

Forking a thread at a checkpoint whose last AI message asks for a tool
(`invoke(None, checkpoint_id=...)`, a new answer to an interrupt there,
`update_state(..., checkpoint_id=...)` and then a resume) runs the steps
after it again. A tool call the origin already ran -- the refund issued,
the email sent -- must not run a second time: its `once()` result lived in
the pending writes of the step that ran it, which are gone once that step
finished. So the run that starts a branch looks for the answers the
thread's other branches stored and the branch's `ToolNode` takes them
instead of calling the tool.

An answer counts when a `ToolNode` of this graph wrote it (not a person
through `update_state`, not an input, not another node: an "approve" node
that declined a call wrote an answer too, and a branch that approves it
must run the tool), it succeeded (an error is worth another try), and it
answers the same call: the same AI message, call id, tool name and
arguments. A call whose arguments were edited is a new call. Of several
branches that answered it, the newest wins. `rerun_tool_calls=True` turns
it all off.

The look-up reads the thread's whole history once, and only when a run
starts a branch (or continues one: every checkpoint of a branch says so in
its metadata, `"branch": True`) from a checkpoint with unanswered calls.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flowgraph._context import current_task, listening
from flowgraph.graph._thread.record import record_payload
from flowgraph.graph._thread.replay import load
from flowgraph.messages import AIMessage, ToolCall, ToolMessage

if TYPE_CHECKING:
    from flowgraph.checkpoint.base import BaseCheckpointer, CheckpointRecord
    from flowgraph.graph._core.schema import StateAdapter
    from flowgraph.graph._core.spec import NodeSpec

if TYPE_CHECKING:
    from flowgraph.checkpoint import serde
else:
    from flowgraph._lazy import LazyModule

    serde = LazyModule("flowgraph.checkpoint.serde")

__all__ = ["Reuse", "StoredAnswer", "answer_from_origin", "stored_answers"]

logger = logging.getLogger("flowgraph")


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """A tool call's result as another branch of the thread stored it."""

    message: ToolMessage
    name: str
    args: dict[str, Any]
    checkpoint_id: str
    """The checkpoint whose step wrote the answer."""


@dataclass(frozen=True, slots=True)
class Reuse:
    """What a branch's run may take instead of running a tool."""

    answers: dict[str, StoredAnswer]
    """By tool call id."""


@dataclass(frozen=True, slots=True)
class _OpenCall:
    ai_id: str | None
    name: str
    args: dict[str, Any]


def _open_calls(fields: frozenset[str], values: dict[str, Any]) -> dict[str, _OpenCall]:
    """The calls of each field's last AI message that no ToolMessage after it answers yet."""
    calls: dict[str, _OpenCall] = {}
    for key in fields:
        answered: set[str] = set()
        for message in reversed(values.get(key) or ()):
            if isinstance(message, ToolMessage):
                answered.add(message.tool_call_id)
            elif isinstance(message, AIMessage):
                for call in message.tool_calls:
                    if call.id not in answered:
                        calls[call.id] = _OpenCall(message.id, call.name, call.args)
                break
    return calls


def stored_answers(
    checkpointer: BaseCheckpointer,
    state: StateAdapter,
    nodes: dict[str, NodeSpec],
    thread_id: str,
    checkpoint_id: str,
    values: dict[str, Any],
    known: Collection[str] = (),
) -> Reuse | None:
    """The answers other branches of the thread stored for the calls open at the checkpoint.

    `known`: the message keys the checkpoint's own state holds (none of them
    answers a call still open there, so they are not read). None when there
    is nothing to reuse (the usual case: no call is open).
    """
    open_calls = _open_calls(state.message_fields, values)
    if not open_calls:
        return None
    records = checkpointer.history(thread_id)
    parents = {r.checkpoint_id: r.parent_id for r in records}
    lineage: set[str] = set()
    cursor: str | None = checkpoint_id
    while cursor is not None and cursor not in lineage:
        lineage.add(cursor)
        cursor = parents.get(cursor)
    # message key -> the records that hold it, each with the node that wrote it there
    # (None: a snapshot, which keeps no writer)
    holders: dict[str, list[tuple[CheckpointRecord, str | None]]] = defaultdict(list)
    fields = state.message_fields
    for record in records:
        if record.checkpoint_id in lineage:
            continue  # the branch's own past holds no answer to a call still open in it
        payload = record_payload(record)
        for key in fields:
            for message_key in payload.get("values", {}).get(key, ()):
                holders[message_key].append((record, None))
        for node, _, writes in payload.get("writes", ()):
            for key, value in writes:
                if key in fields:
                    for message_key in value:
                        if isinstance(message_key, str):
                            holders[message_key].append((record, node))
    for message_key in known:
        holders.pop(message_key, None)
    if not holders:
        return None
    answers: dict[str, StoredAnswer] = {}
    loaded: dict[str, dict[str, Any]] = {}
    for message_key, data in checkpointer.messages(thread_id, holders).items():
        message = serde.loads(data)
        if not isinstance(message, ToolMessage) or message.status != "success":
            continue
        wanted = open_calls.get(message.tool_call_id)
        if wanted is None:
            continue
        writer = _writer(holders[message_key], nodes)
        if writer is None:
            continue
        if writer.checkpoint_id not in loaded:
            loaded[writer.checkpoint_id] = load(
                checkpointer, state, thread_id, writer.checkpoint_id
            ).values
        if not _answers_call(fields, loaded[writer.checkpoint_id], message, wanted):
            continue
        found = answers.get(message.tool_call_id)
        if found is None or found.checkpoint_id < writer.checkpoint_id:
            answers[message.tool_call_id] = StoredAnswer(
                message, wanted.name, wanted.args, writer.checkpoint_id
            )
    return Reuse(answers) if answers else None


def _writer(
    holders: list[tuple[CheckpointRecord, str | None]], nodes: dict[str, NodeSpec]
) -> CheckpointRecord | None:
    """The record whose step wrote the message, if a ToolNode of a run wrote it.

    A step that keeps its writes names the node; a snapshot does not, so
    the oldest snapshot holding the message (no step kept it as a write)
    wrote it, and counts when every node of its step is a ToolNode. A step
    `update_state` wrote (`as_node="tools"` included) is a person's answer.
    """
    written = [(record, node) for record, node in holders if node is not None]
    if written:
        record, node = min(written, key=lambda held: held[0].checkpoint_id)
        step_nodes = [node]
    else:
        record = min((held[0] for held in holders), key=lambda r: r.checkpoint_id)
        step_nodes = None
    metadata = record_payload(record).get("metadata", {})
    if metadata.get("source") not in ("loop", "fork"):
        return None
    if step_nodes is None:
        step_nodes = metadata.get("nodes") or []
    tools = [name for name in step_nodes if (spec := nodes.get(name or "")) and spec.kind == "tool"]
    return record if step_nodes and len(tools) == len(step_nodes) else None


def _answers_call(
    fields: frozenset[str], values: dict[str, Any], answer: ToolMessage, wanted: _OpenCall
) -> bool:
    """Whether, where it was written, `answer` answers the very call still open here."""
    for key in fields:
        messages = values.get(key) or []
        for index, message in enumerate(messages):
            if isinstance(message, ToolMessage) and message.id == answer.id and message == answer:
                for earlier in reversed(messages[:index]):
                    if isinstance(earlier, AIMessage):
                        call = next(
                            (c for c in earlier.tool_calls if c.id == answer.tool_call_id), None
                        )
                        if call is not None:
                            return (
                                earlier.id == wanted.ai_id
                                and call.name == wanted.name
                                and call.args == wanted.args
                            )
                return False
    return False


def answer_from_origin(call: ToolCall) -> ToolMessage | None:
    """The stored answer a branch's ToolNode takes for `call`, instead of running it."""
    scope = current_task.get()
    reuse = scope.reuse if scope is not None else None
    if not isinstance(reuse, Reuse):
        return None
    stored = reuse.answers.get(call.id)
    if stored is None or stored.name != call.name or stored.args != call.args:
        return None
    logger.info(
        "Reused the stored result of tool call %s (%s) from checkpoint %s instead of running "
        "it again (rerun_tool_calls=True runs it)",
        call.id,
        call.name,
        stored.checkpoint_id,
    )
    if listening("events"):
        assert scope is not None and scope.emit is not None
        scope.emit(
            "events",
            {
                "event": "reused",
                "task": scope.task_index,
                "tool_call_id": call.id,
                "name": call.name,
                "checkpoint_id": stored.checkpoint_id,
            },
        )
    return stored.message
