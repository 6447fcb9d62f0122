"""How a run's steps become checkpoint records, and records become state again.

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

Reading a checkpoint replays its writes from the base snapshot through
`apply_writes`, the function the live run merged them with, so the rebuilt
state is exactly the state the run had.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from flowgraph._context import RunUsage
from flowgraph._ids import scope_key
from flowgraph._lazy import LazyModule
from flowgraph.checkpoint._lease import process_owner
from flowgraph.checkpoint.base import (
    BaseCheckpointer,
    CheckpointRecord,
    PendingWrite,
    new_checkpoint_id,
)
from flowgraph.errors import DeserializationError, SerializationError
from flowgraph.graph._interrupt import Pause
from flowgraph.graph._lease import LeaseHeld
from flowgraph.graph._plan import Task, TaskResult, apply_writes
from flowgraph.graph._pool import finish_off_loop
from flowgraph.graph._types import MISSING, START, Interrupt, Send, StateSnapshot
from flowgraph.messages import RemoveMessage
from flowgraph.reducers import add_messages

if TYPE_CHECKING:
    from flowgraph.graph._lease import RunLease
    from flowgraph.graph._schema import StateAdapter

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
    "Saver",
    "ThreadCache",
    "encode_pending",
    "encode_step",
    "load",
    "load_pending",
    "record_payload",
    "referenced_messages",
    "step_scope",
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


def snapshot_of(loaded: Loaded, state: StateAdapter) -> StateSnapshot:
    """What `get_state` shows of a loaded checkpoint: values detached from the run's."""
    record = loaded.record
    return StateSnapshot(
        values=state.detached(loaded.values),
        next=tuple(t.node for t in loaded.tasks),
        checkpoint_id=record.checkpoint_id,
        parent_id=record.parent_id,
        step=record.step,
        created_at=record.created_at,
        metadata=loaded.metadata,
        interrupts=tuple(i for p in loaded.pending.values() for i in p.interrupts),
        thread_id=record.thread_id,
    )


def step_scope(thread_id: str, parent_id: str | None) -> str:
    """The id key of the step after `parent_id`: the same whichever run executes it."""
    return scope_key(thread_id, parent_id)


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
    return _decode_pending_writes(checkpointer.pending(thread_id, checkpoint_id))


def _decode_pending_writes(writes: Sequence[PendingWrite]) -> dict[int, PendingTask]:
    return {w.task_index: _decode_pending(w) for w in writes}


def load(
    checkpointer: BaseCheckpointer,
    state: StateAdapter,
    thread_id: str,
    checkpoint_id: str,
    *,
    head: str | None = None,
    cache: ThreadCache | None = None,
    pending: list[PendingWrite] | None = None,
) -> Loaded:
    """Rebuild a checkpoint's state by replaying its chain through the live reducers.

    `head` is the thread's current head if the caller already read it, and
    `pending` the writes left against the checkpoint; a `cache` holding the
    checkpoint spares the replay.
    """
    if head is None:
        head = checkpointer.head(thread_id)
    if pending is None:
        pending = checkpointer.pending(thread_id, checkpoint_id)
    cached = cache.get(thread_id, checkpoint_id) if cache is not None else None
    if cached is not None:
        cached.cursor.expected = head
        cached.pending.update(_decode_pending_writes(pending))
        return cached
    chain = checkpointer.chain(thread_id, checkpoint_id)
    payloads = [record_payload(r) for r in chain]
    fields = state.message_fields
    wanted: set[str] = set()
    for i, payload in enumerate(payloads):
        if i == 0:
            for key in fields:
                wanted.update(payload["values"].get(key, ()))
        else:
            for _, _, writes in payload["writes"]:
                for key, value in writes:
                    if key in fields:
                        wanted.update(m for m in value if isinstance(m, str))
    stored = checkpointer.messages(thread_id, wanted)
    missing = wanted - stored.keys()
    if missing:
        raise DeserializationError(
            f"Thread {thread_id!r} lost {len(missing)} stored message(s) "
            f"(e.g. {sorted(missing)[0]!r}); the store is damaged"
        )
    cursor = Cursor(thread_id, head=checkpoint_id, expected=head, base_id=chain[0].checkpoint_id)
    messages = {}
    for key, data in stored.items():
        try:
            message = serde.loads(data)
        except DeserializationError as exc:
            raise DeserializationError(
                f"Stored message {key!r} of thread {thread_id!r} is damaged: {exc}"
            ) from exc
        messages[key] = message
        cursor.remember(message, key)

    def resolve(key: str, value: Any) -> Any:
        return [messages[m] if isinstance(m, str) else m for m in value] if key in fields else value

    snapshot = payloads[0]["values"]
    values = {
        key: add_messages([], resolve(key, value)) if key in fields else value
        for key, value in snapshot.items()
    }
    cursor.snapshot_bytes = len(chain[0].payload)
    for record, payload in zip(chain[1:], payloads[1:], strict=True):
        results = [
            TaskResult(Task(node, index), [(key, resolve(key, value)) for key, value in writes])
            for node, index, writes in payload["writes"]
        ]
        values = apply_writes(
            state, values, results, scope=step_scope(thread_id, record.parent_id), step=record.step
        )
        cursor.bytes_since_snapshot += len(record.payload)
        cursor.steps_since_snapshot += 1
    last = payloads[-1]
    tasks = [Task(t[0], t[1], t[2] if len(t) > 2 else MISSING) for t in last["next"]]
    return Loaded(
        record=chain[-1],
        values=values,
        tasks=tasks,
        joins={int(k): set(v) for k, v in last["joins"].items()},
        metadata=last["metadata"],
        pending=_decode_pending_writes(pending),
        cursor=cursor,
    )


class ThreadCache:
    """The state each recently used thread last reached in this process.

    Continuing a thread then costs one look at its head instead of reading
    and replaying its history; a head moved by another process is a miss,
    and pending writes are always read from the store.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._entries: OrderedDict[str, tuple[Any, ...]] = OrderedDict()
        """thread id -> what `put` took, as one tuple: a run puts one per step."""
        self._lock = threading.Lock()

    def get(self, thread_id: str, checkpoint_id: str) -> Loaded | None:
        with self._lock:
            entry = self._entries.get(thread_id)
            if entry is None or entry[0].checkpoint_id != checkpoint_id:
                return None
            self._entries.move_to_end(thread_id)
        record, values, tasks, joins, metadata, base_id, since, steps, size, keys, held = entry
        cursor = Cursor(
            thread_id, checkpoint_id, checkpoint_id, base_id, since, steps, size, keys, held
        )
        return Loaded(
            record,
            dict(values),
            list(tasks),
            {k: set(v) for k, v in joins.items()},
            metadata,
            {},
            cursor,
        )

    def put(
        self,
        record: CheckpointRecord,
        values: dict[str, Any],
        tasks: Sequence[Task],
        joins: dict[int, set[str]],
        metadata: dict[str, Any],
        cursor: Cursor,
    ) -> None:
        """Remember the state `cursor` reached by storing `record` (its head now)."""
        entry = (
            record,
            values,
            list(tasks),
            dict(joins),
            metadata,
            cursor.base_id,
            cursor.bytes_since_snapshot,
            cursor.steps_since_snapshot,
            cursor.snapshot_bytes,
            cursor.keys,
            cursor.held,
        )
        thread_id = record.thread_id
        with self._lock:
            entries = self._entries
            entries[thread_id] = entry
            entries.move_to_end(thread_id)
            while len(entries) > self.size:
                entries.popitem(last=False)

    def forget(self, thread_id: str) -> None:
        with self._lock:
            self._entries.pop(thread_id, None)


class Saver:
    """A run's connection to its thread's history: writes each step and each pause.

    With `direct`, the checkpointer's sync methods are called from the run
    loop (the sync API's private loop, or a store that never blocks);
    otherwise their async twins keep the caller's event loop free.
    """

    def __init__(
        self,
        checkpointer: BaseCheckpointer,
        state: StateAdapter,
        cursor: Cursor,
        *,
        run_id: str,
        direct: bool,
        cache: ThreadCache | None = None,
        fork: bool = False,
        branch: bool = False,
        claim: RunLease | None = None,
    ) -> None:
        self.claim = claim
        """A lease the first write takes with it (`put_and_acquire`); None once taken."""
        self.checkpointer = checkpointer
        self.state = state
        self.cursor = cursor
        self.run_id = run_id
        self.direct = direct
        self.cache = cache
        self.fork = fork
        """The next step starts a new branch: its checkpoint's source is "fork"."""
        self.branch = branch or fork
        """The run extends a branch (not the thread's first line): every checkpoint it
        writes says so in its metadata (`"branch": True`), so a later run on it knows to
        look for tool results another branch stored (see `graph._reuse`)."""

    def step_scope(self) -> str:
        return step_scope(self.cursor.thread_id, self.cursor.head)

    async def _call(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """A store call: from the run loop when `direct`, else on a worker thread."""
        return fn(*args, **kwargs) if self.direct else await finish_off_loop(fn, *args, **kwargs)

    async def save_step(
        self,
        values: dict[str, Any],
        results: Sequence[TaskResult],
        tasks: Sequence[Task],
        joins: dict[int, set[str]],
        usage: RunUsage,
        step: int,
        source: str = "loop",
        *,
        release: RunLease | None = None,
    ) -> CheckpointRecord:
        """Store a finished step (compare-and-set on the thread head); raise if another won.

        `release`: the run's lease, when this is its last step; the store gives
        it back in the same write if it can (`put_and_release`).
        """
        cursor = self.cursor
        if self.fork:
            source, self.fork = "fork", False
        metadata: dict[str, Any] = {
            "source": source,
            "nodes": [r.task.node for r in results],
            "run_id": self.run_id,
            "usage": usage.as_dict(),
        }
        if self.branch:
            metadata["branch"] = True
        record, messages = encode_step(
            self.state,
            cursor,
            step=step,
            values=values,
            results=results,
            next_tasks=tasks,
            joins=joins,
            metadata=metadata,
        )
        store, expected = self.checkpointer, cursor.expected
        if self.claim is not None:
            claim, self.claim = self.claim, None
            holder = await self._call(
                store.put_and_acquire,
                record,
                expected_head=expected,
                messages=messages,
                run_id=claim.run_id,
                owner=process_owner(),
                lease_s=claim.lease_s,
            )
            if holder is not None:
                raise LeaseHeld(holder)
        elif release is not None and not release.lost:
            release.released = await self._call(
                store.put_and_release,
                record,
                expected_head=expected,
                messages=messages,
                run_id=release.run_id,
                owner=process_owner(),
            )
        else:
            await self._call(store.put, record, expected_head=expected, messages=messages)
        cursor.committed(record.checkpoint_id)
        if self.cache is not None:
            self.cache.put(record, values, tasks, joins, metadata, cursor)
        return record

    def save_memo(
        self, index: int, task: PendingTask, key: str, data: bytes, lock: threading.Lock
    ) -> None:
        """Add a `once()` result to a running task's row and store the row, now.

        Called from the task's thread or the event loop; `lock` (one per task)
        orders two results of one task, so the last row written has both.
        """
        head = self.cursor.head
        assert head is not None, "a run saves its input step before any node runs"
        with lock:
            task.memo[key] = data
            write = PendingWrite(task_index=index, payload=encode_pending(task))
            self.checkpointer.put_pending(self.cursor.thread_id, head, [write])

    async def save_pending(self, pending: dict[int, PendingTask]) -> None:
        """Keep the finished tasks and pauses of an unfinished step."""
        head = self.cursor.head
        assert head is not None, "a run saves its input step before any other"
        writes = [PendingWrite(task_index=i, payload=encode_pending(t)) for i, t in pending.items()]
        await self._call(self.checkpointer.put_pending, self.cursor.thread_id, head, writes)
