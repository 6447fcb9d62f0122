"""The checkpoint record: what a stored step holds, and how a run's step becomes one.

The stored form grows with what changed, not with the history:

- a message is stored once per thread, in the checkpointer's message log,
  under `<id>#<hash of its bytes>` (a message replaced in place gets a new
  key; the old version stays for the checkpoints that still show it);
- a checkpoint usually holds only its step's writes (message writes as
  keys), its next tasks and its metadata;
- now and then a checkpoint is a snapshot of every field (message fields as
  key lists): when the bytes written since the last snapshot reach the
  snapshot's own size, so snapshots cost at most as much again as the
  deltas, and replaying a checkpoint never reads more than that.

Reading a checkpoint back (`replay`) replays its writes from the base
snapshot through `apply_writes`, the function the live run merged them
with, so the rebuilt state is exactly the state the run had.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from flowgraph._ids import scope_key
from flowgraph._lazy import LazyModule
from flowgraph.checkpoint.base import (
    BaseCheckpointer,
    CheckpointRecord,
    PendingWrite,
    new_checkpoint_id,
)
from flowgraph.errors import DeserializationError, SerializationError
from flowgraph.graph._core.interrupt import Pause
from flowgraph.graph._core.merge import step_scope
from flowgraph.graph._core.spec import Task, TaskResult
from flowgraph.graph._core.types import (
    MISSING,
    PULL,
    PUSH,
    START,
    Interrupt,
    Send,
    SnapshotTask,
    StateSnapshot,
)
from flowgraph.messages import RemoveMessage

if TYPE_CHECKING:
    from flowgraph.graph._core.schema import StateAdapter

if TYPE_CHECKING:
    import hashlib

    from flowgraph.checkpoint import serde
else:  # runs without a checkpointer never encode: the codec loads with the first write
    hashlib = LazyModule("hashlib")
    serde = LazyModule("flowgraph.checkpoint.serde")

__all__ = [
    "FORMAT_VERSION",
    "Cursor",
    "Loaded",
    "PendingTask",
    "decode_pending_writes",
    "encode_pending",
    "encode_step",
    "load_pending",
    "record_payload",
    "referenced_messages",
]

T = TypeVar("T")

FORMAT_VERSION = 1
MAX_STEPS_BETWEEN_SNAPSHOTS = 512
"""Bounds replay work even for steps that write almost nothing."""
MIN_BYTES_BETWEEN_SNAPSHOTS = 16 * 1024
"""A small state is not copied every few steps: its deltas may add up to this much
before the next snapshot (a load replays at most ~16 KB). In a 10-turn ReAct thread,
a snapshot came every ~3.5 steps; this cut the bytes stored per step by a third."""


@dataclass(slots=True)
class Cursor:
    """Where a run stands in its thread: the head it will extend, and the snapshot bookkeeping."""

    thread_id: str
    head: str | None = None
    """The last checkpoint of this run's branch (the parent of the next one)."""
    expected: str | None = None
    """The thread's head as this run last saw it: the compare-and-set of the next write."""
    base_id: str | None = None
    bytes_since_snapshot: int = 0
    steps_since_snapshot: int = 0
    snapshot_bytes: int = 0
    keys: dict[int, str] = field(default_factory=dict)
    """id(message) -> key for messages known to be stored (shared by clones)."""
    held: list[Any] = field(default_factory=list)
    """The messages of `keys`, kept alive so that an id there is always its message's."""
    staged: dict[int, str] = field(default_factory=dict)
    """Keys of messages in a write not yet committed; they join `keys` once it is."""
    staged_held: list[Any] = field(default_factory=list)

    def key_of(self, message: Any, new: dict[str, bytes]) -> str:
        """The message's storage key, adding its bytes to `new` if not stored yet."""
        ident = id(message)
        key = self.keys.get(ident) or self.staged.get(ident)
        if key is None:
            data = serde.dumps(message)
            key = f"{message.id}#{hashlib.blake2b(data, digest_size=6).hexdigest()}"
            new[key] = data
            self.staged[ident] = key
            self.staged_held.append(message)
        return key

    def keys_of(self, messages: Sequence[Any], new: dict[str, bytes]) -> list[str]:
        """`key_of` of each message; the look-up of those stored before runs in C."""
        found: list[str | None] = list(map(self.keys.get, map(id, messages)))
        if None in found:
            for i, key in enumerate(found):
                if key is None:
                    found[i] = self.key_of(messages[i], new)
        return found  # type: ignore[return-value]  # every None was replaced

    def remember(self, message: Any, key: str) -> None:
        """`message` is stored under `key` (read back from the store)."""
        self.keys[id(message)] = key
        self.held.append(message)

    def committed(self, checkpoint_id: str) -> None:
        """The write of `checkpoint_id` is stored: it is the new head, its messages are known."""
        self.head = self.expected = checkpoint_id
        if self.staged:
            self.keys.update(self.staged)
            self.held += self.staged_held
            self.staged.clear()
            self.staged_held.clear()


@dataclass(slots=True)
class PendingTask:
    """A task of an unfinished step that already ran (its writes) or paused (its interrupts)."""

    node: str
    writes: list[tuple[str, Any]] | None = None
    goto: list[str | Send] = field(default_factory=list)
    pauses: list[Pause] = field(default_factory=list)
    """The interrupts waiting for an answer (several when parallel tasks of a subgraph paused)."""
    answers: dict[str, Any] = field(default_factory=dict)
    """Values given to this task's earlier interrupts, by key (see `Pause.key`)."""
    breakpoint: bool = False
    """Paused by interrupt_before, not by interrupt()."""
    memo: dict[str, bytes] = field(default_factory=dict)
    """What the task's `once()` calls returned (encoded), for the task's next run."""
    error: str | None = None
    """The repr of the exception the task raised (the step stopped on it)."""

    @property
    def interrupts(self) -> list[Interrupt]:
        return [p.interrupt for p in self.pauses]

    @property
    def interrupt(self) -> Interrupt | None:
        """The first waiting interrupt (see `interrupts` for all of them)."""
        return self.pauses[0].interrupt if self.pauses else None


@dataclass(slots=True)
class Loaded:
    """A checkpoint rebuilt: its state and everything needed to continue from it."""

    record: CheckpointRecord
    values: dict[str, Any]
    tasks: list[Task]
    joins: dict[int, set[str]]
    metadata: dict[str, Any]
    pending: dict[int, PendingTask]
    cursor: Cursor


def snapshot_of(
    loaded: Loaded, state: StateAdapter, subgraphs: frozenset[str] = frozenset()
) -> StateSnapshot:
    """What `get_state` shows of a loaded checkpoint: values detached from the run's.

    `subgraphs` names the graph's subgraph nodes: their tasks carry their config.
    """
    record = loaded.record
    return StateSnapshot(
        values=state.detached(loaded.values),
        next=tuple(t.node for t in loaded.tasks),
        checkpoint_id=record.checkpoint_id,
        parent_id=record.parent_id,
        step=record.step,
        created_at=record.created_at,
        # LangGraph's keys too ("step", "parents"), read from the record, not stored twice
        metadata={**loaded.metadata, "step": record.step, "parents": {}},
        interrupts=tuple(i for p in loaded.pending.values() for i in p.interrupts),
        thread_id=record.thread_id,
        tasks=_snapshot_tasks(loaded, state, subgraphs),
    )


def _snapshot_tasks(
    loaded: Loaded, state: StateAdapter, subgraphs: frozenset[str]
) -> tuple[SnapshotTask, ...]:
    """The next step's tasks as LangGraph's `PregelTask`s, with what a stopped step left."""
    record = loaded.record
    scope = step_scope(record.thread_id, record.checkpoint_id)
    tasks = []
    sends = 0
    for task in loaded.tasks:
        task_id = scope_key(scope, record.step + 1, task.index)
        if task.arg is MISSING:
            path: tuple[Any, ...] = (PULL, task.node)
        else:
            path = (PUSH, sends, False)
            sends += 1
        left = loaded.pending.get(task.index)
        config = None
        if task.node in subgraphs:
            ns = f"{task.node}:{task_id}"
            config = {"configurable": {"thread_id": record.thread_id, "checkpoint_ns": ns}}
        tasks.append(
            SnapshotTask(
                id=task_id,
                name=task.node,
                path=path,
                error=None if left is None else left.error,
                interrupts=() if left is None else tuple(left.interrupts),
                state=config,
                result=state.shown(left.writes) if left is not None and left.writes else None,
            )
        )
    return tuple(tasks)


def _encode_writes(
    fields: frozenset[str], writes: Sequence[tuple[str, Any]], cursor: Cursor, new: dict[str, bytes]
) -> list[list[Any]]:
    encoded = []
    for key, value in writes:
        if key in fields:
            value = [m if type(m) is RemoveMessage else cursor.key_of(m, new) for m in value]
        encoded.append([key, value])
    return encoded


def _encode_values(
    fields: frozenset[str], values: dict[str, Any], cursor: Cursor, new: dict[str, bytes]
) -> dict[str, Any]:
    return {
        key: cursor.keys_of(value, new) if key in fields else value for key, value in values.items()
    }


def _encode_tasks(tasks: Sequence[Task]) -> list[list[Any]]:
    return [[t.node, t.index] if t.arg is MISSING else [t.node, t.index, t.arg] for t in tasks]


def _dumps(payload: dict[str, Any], node: str | Sequence[TaskResult]) -> bytes:
    """The payload's bytes; an error names `node` (or the nodes of `results`, or the input)."""
    try:
        return serde.dumps(payload)
    except SerializationError as exc:
        if not isinstance(node, str):
            node = ", ".join(r.task.node for r in node if r.task.node != START)
        who = f"Node '{node}'" if node else "The input (or a default of the state schema)"
        raise SerializationError(
            f"{who} put a value in the state that cannot be checkpointed: {exc}",
            path=exc.path,
            type_name=exc.type_name,
        ) from exc


def _sender(results: Sequence[TaskResult] | str) -> str:
    """Who routed a step's Sends: its node(s), or the input (START's conditional edges)."""
    nodes = [results] if isinstance(results, str) else [r.task.node for r in results]
    named = [n for n in nodes if n != START]
    if not named:
        return "the input's conditional edge from START"
    return "node " + ", ".join(f"'{n}'" for n in named)


def _send_error(
    sender: Sequence[TaskResult] | str, sends: Sequence[tuple[str, Any]]
) -> SerializationError | None:
    """The error for the first Send whose argument the codec cannot store, if one is."""
    for i, (target, arg) in enumerate(sends):
        try:
            serde.dumps(arg)
        except SerializationError as exc:
            inner = exc.path
            path = f"Send[{i}].arg" + (inner if inner.startswith("[") or not inner else f".{inner}")
            return SerializationError(
                f"A Send to node '{target}' from {_sender(sender)} carries an argument that "
                f"cannot be checkpointed, at {path}. {exc}",
                path=path,
                type_name=exc.type_name,
            )
    return None


def _blame(
    results: Sequence[TaskResult], error: SerializationError, next_tasks: Sequence[Task] = ()
) -> SerializationError:
    """The error restated for the node, field and path that hold the value, if one does
    (a write of the step, or the argument of a Send it routed)."""
    for result in results:
        for key, value in result.writes:
            try:
                serde.dumps({key: value})
            except SerializationError as exc:
                who = "The input" if result.task.node == START else (f"Node '{result.task.node}'")
                return SerializationError(
                    f"{who} wrote a value that cannot be checkpointed, at {exc.path}: {exc}; "
                    "nothing of this step was stored",
                    path=exc.path,
                    type_name=exc.type_name,
                )
    sends = [(t.node, t.arg) for t in next_tasks if t.arg is not MISSING]
    return _send_error(results, sends) or error


def encode_step(
    state: StateAdapter,
    cursor: Cursor,
    *,
    step: int,
    values: dict[str, Any],
    results: Sequence[TaskResult],
    next_tasks: Sequence[Task],
    joins: dict[int, set[str]],
    metadata: dict[str, Any],
) -> tuple[CheckpointRecord, dict[str, bytes]]:
    """The record for a finished step, and the messages it must store with it.

    Raises SerializationError naming the node and the path of a value the
    codec cannot encode, before anything is written.
    """
    try:
        return _encode_step(state, cursor, step, values, results, next_tasks, joins, metadata)
    except SerializationError as exc:
        raise _blame(results, exc, next_tasks) from exc


def _encode_step(
    state: StateAdapter,
    cursor: Cursor,
    step: int,
    values: dict[str, Any],
    results: Sequence[TaskResult],
    next_tasks: Sequence[Task],
    joins: dict[int, set[str]],
    metadata: dict[str, Any],
) -> tuple[CheckpointRecord, dict[str, bytes]]:
    new_messages: dict[str, bytes] = {}
    checkpoint_id = new_checkpoint_id()
    fields = state.message_fields
    payload: dict[str, Any] = {
        "v": FORMAT_VERSION,
        "next": _encode_tasks(next_tasks),
        "joins": {str(k): sorted(v) for k, v in joins.items()},
        "metadata": metadata,
        "writes": [
            [r.task.node, r.task.index, _encode_writes(fields, r.writes, cursor, new_messages)]
            for r in results
            if r.writes
        ],
    }
    delta = _dumps(payload, results)
    size = len(delta) + sum(map(len, new_messages.values()))
    snapshot = (
        cursor.base_id is None
        or cursor.bytes_since_snapshot + size
        >= max(cursor.snapshot_bytes, MIN_BYTES_BETWEEN_SNAPSHOTS)
        or cursor.steps_since_snapshot >= MAX_STEPS_BETWEEN_SNAPSHOTS
    )
    if snapshot:
        if not (len(results) == 1 and results[0].task.node == START):
            # an input step keeps its input: a run from the checkpoint before it (see
            # `inputs`) applies it again; replay reads a snapshot's values only
            del payload["writes"]
        payload["values"] = _encode_values(fields, state.stored(values), cursor, new_messages)
        data = _dumps(payload, results)
        cursor.base_id = checkpoint_id
        cursor.snapshot_bytes = len(data)
        cursor.bytes_since_snapshot = 0
        cursor.steps_since_snapshot = 0
    else:
        data = delta
        cursor.bytes_since_snapshot += size
        cursor.steps_since_snapshot += 1
    record = CheckpointRecord(
        thread_id=cursor.thread_id,
        checkpoint_id=checkpoint_id,
        parent_id=cursor.head,
        step=step,
        created_at=time.time(),
        base_id=cursor.base_id or checkpoint_id,
        payload=data,
    )
    return record, new_messages


def encode_pending(task: PendingTask) -> bytes:
    """A pending task as bytes (messages inline: pending writes are short-lived)."""
    payload: dict[str, Any] = {"node": task.node}
    if task.writes is not None:
        payload["writes"] = [[k, v] for k, v in task.writes]
    if task.goto:
        payload["goto"] = [g if isinstance(g, str) else [g.node, g.arg] for g in task.goto]
    if task.pauses:
        payload["pauses"] = [
            [p.interrupt.value, p.interrupt.id, p.interrupt.node, p.key] for p in task.pauses
        ]
    if task.answers:
        payload["answers"] = task.answers
    if task.breakpoint:
        payload["breakpoint"] = True
    if task.memo:
        payload["memo"] = task.memo
    if task.error is not None:
        payload["error"] = task.error
    try:
        return _dumps(payload, task.node)
    except SerializationError as exc:
        sends = [(g.node, g.arg) for g in task.goto if isinstance(g, Send)]
        raise (_send_error(task.node, sends) or exc) from exc


def _decode_pending(write: PendingWrite) -> PendingTask:
    data = serde.loads(write.payload)
    node = data["node"]
    pauses = [Pause(Interrupt(v, i, n), k) for v, i, n, k in data.get("pauses", ())]
    answers = dict(data.get("answers", {}))
    if "interrupt" in data:  # the first layout: one interrupt, answers in order
        resumes = list(data.get("resumes", ()))
        answers = {f"i{n}": v for n, v in enumerate(resumes)}
        value, interrupt_id = data["interrupt"]
        pauses = [Pause(Interrupt(value, interrupt_id, node), f"i{len(resumes)}")]
    return PendingTask(
        node=node,
        writes=[(k, v) for k, v in data["writes"]] if "writes" in data else None,
        goto=[g if isinstance(g, str) else Send(g[0], g[1]) for g in data.get("goto", ())],
        pauses=pauses,
        answers=answers,
        breakpoint=bool(data.get("breakpoint")),
        memo=dict(data.get("memo", {})),
        error=data.get("error"),
    )


def record_payload(record: CheckpointRecord) -> dict[str, Any]:
    """A record's payload decoded; DeserializationError naming the checkpoint if it cannot be."""
    try:
        data = serde.loads(record.payload)
    except DeserializationError as exc:
        raise DeserializationError(
            f"Checkpoint {record.checkpoint_id!r} of thread {record.thread_id!r} is damaged: {exc}"
        ) from exc
    if not isinstance(data, dict) or data.get("v") != FORMAT_VERSION:
        raise DeserializationError(
            f"Checkpoint {record.checkpoint_id!r} of thread {record.thread_id!r} has an "
            f"unknown layout (version {data.get('v') if isinstance(data, dict) else '?'}); "
            "it was written by a newer flowgraph"
        )
    return data


def referenced_messages(
    checkpointer: BaseCheckpointer, state: StateAdapter, thread_id: str
) -> set[str]:
    """The message keys the thread's stored records use (snapshots and deltas)."""
    fields = state.message_fields
    keys: set[str] = set()
    for record in checkpointer.history(thread_id):
        payload = record_payload(record)
        if "values" in payload:
            for key in fields:
                keys.update(payload["values"].get(key, ()))
        for _, _, writes in payload.get("writes", ()):
            for key, value in writes:
                if key in fields:
                    keys.update(m for m in value if isinstance(m, str))
    return keys


def load_pending(
    checkpointer: BaseCheckpointer, thread_id: str, checkpoint_id: str
) -> dict[int, PendingTask]:
    """What the unfinished step after `checkpoint_id` left, by task index."""
    return decode_pending_writes(checkpointer.pending(thread_id, checkpoint_id))


def decode_pending_writes(writes: Sequence[PendingWrite]) -> dict[int, PendingTask]:
    return {w.task_index: _decode_pending(w) for w in writes}
