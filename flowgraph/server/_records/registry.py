"""The run registry: threads' metadata and run records, in the checkpoint store.

Records are documents of the checkpoint store (see `docs`), so a restarted
server, or any other server on the same store, answers `runs.get`, `list`
and `join` for any run. Which run holds a thread is the engine's thread
lease; a run record names the process running it (its `owner`, as the
lease writes it) and a heartbeat that process renews, so a run whose
process is gone (same machine: at once; elsewhere: after `lease_s` without
a heartbeat) is seen as lost by any other process.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from flowgraph.checkpoint._lease import owner_is_gone, process_owner
from flowgraph.server._records.docs import DocStore, MemoryDocs, SQLiteDocs

if TYPE_CHECKING:
    from flowgraph.checkpoint.base import BaseCheckpointer

__all__ = [
    "ACTIVE",
    "FINISHED",
    "LEASE_S",
    "Registry",
    "RunRecord",
    "ThreadRecord",
    "open_registry",
]

LEASE_S = 15.0
"""A running run whose heartbeat is older than this is taken to be lost."""
ACTIVE = frozenset({"pending", "running"})
FINISHED = frozenset({"success", "error", "interrupted", "timeout"})


def _from_doc(cls: type[Any], doc: dict[str, Any]) -> Any:
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in doc.items() if k in names})


@dataclass(slots=True, kw_only=True)
class ThreadRecord:
    """A thread as the API knows it (its state lives in the checkpoints)."""

    thread_id: str
    created_at: float
    updated_at: float
    metadata: dict[str, Any] = field(default_factory=dict)
    status: str = "idle"
    """How the last run left it: idle, interrupted or error (busy is read from its lease)."""
    error: dict[str, Any] | None = None


@dataclass(slots=True, kw_only=True)
class RunRecord:
    """One run: what was asked (`kwargs`), by which assistant, and how it went."""

    run_id: str
    thread_id: str
    assistant_id: str
    graph_id: str
    created_at: float
    updated_at: float
    status: str = "pending"
    metadata: dict[str, Any] = field(default_factory=dict)
    kwargs: dict[str, Any] = field(default_factory=dict)
    multitask_strategy: str = "enqueue"
    owner: str | None = None
    """The process running it (None while pending)."""
    heartbeat: float | None = None
    error: dict[str, Any] | None = None
    cancel: str | None = None
    """A stop asked of the process running it: "interrupt" or "rollback"."""
    head_before: str | None = None
    """The thread's head when the run started: what a rollback returns to."""
    temporary: bool = False
    """A stateless run: its thread is deleted when it ends (unless on_completion=keep)."""


class Registry:
    """Threads and runs over one document store (all methods blocking)."""

    def __init__(self, docs: DocStore, *, lease_s: float = LEASE_S) -> None:
        self.docs = docs
        self.lease_s = lease_s
        self.owner = process_owner()

    def close(self) -> None:
        self.docs.close()

    # -- threads -------------------------------------------------------------------

    def create_thread(self, record: ThreadRecord) -> bool:
        """Store a new thread; False when the id is taken (nothing stored)."""
        return self.docs.insert("thread", record.thread_id, asdict(record))

    def get_thread(self, thread_id: str) -> ThreadRecord | None:
        doc = self.docs.get("thread", thread_id)
        return None if doc is None else _from_doc(ThreadRecord, doc)

    def ensure_thread(self, thread_id: str, metadata: dict[str, Any]) -> ThreadRecord:
        """The thread, created with `metadata` if missing, else with missing keys added."""
        now = time.time()

        def fill(doc: dict[str, Any] | None) -> dict[str, Any] | None:
            if doc is None:
                return asdict(
                    ThreadRecord(
                        thread_id=thread_id, created_at=now, updated_at=now, metadata=dict(metadata)
                    )
                )
            missing = {k: v for k, v in metadata.items() if k not in doc["metadata"]}
            if not missing:
                return None
            doc["metadata"] = {**doc["metadata"], **missing}
            return doc

        doc = self.docs.update("thread", thread_id, fill)
        assert doc is not None
        return _from_doc(ThreadRecord, doc)  # type: ignore[no-any-return]

    def update_thread(
        self,
        thread_id: str,
        *,
        metadata: dict[str, Any] | None = None,
        status: str | None = None,
        error: dict[str, Any] | bool | None = False,
    ) -> ThreadRecord | None:
        """Merge metadata and/or set the status (and error: pass None to clear it)."""

        def change(doc: dict[str, Any] | None) -> dict[str, Any] | None:
            if doc is None:
                return None
            if metadata:
                doc["metadata"] = {**doc["metadata"], **metadata}
            if status is not None:
                doc["status"] = status
            if error is not False:
                doc["error"] = error
            doc["updated_at"] = time.time()
            return doc

        doc = self.docs.update("thread", thread_id, change)
        return None if doc is None else _from_doc(ThreadRecord, doc)

    def delete_thread(self, thread_id: str) -> bool:
        """Forget the thread's record and its runs."""
        for run in self.docs.scan("run", thread_id=thread_id):
            self.docs.delete("run", run["run_id"])
        return self.docs.delete("thread", thread_id)

    def threads(self) -> list[ThreadRecord]:
        return [_from_doc(ThreadRecord, d) for d in self.docs.scan("thread")]

    # -- runs ----------------------------------------------------------------------

    def put_run(self, run: RunRecord) -> None:
        self.docs.put("run", run.run_id, asdict(run))

    def get_run(self, run_id: str) -> RunRecord | None:
        doc = self.docs.get("run", run_id)
        return None if doc is None else _from_doc(RunRecord, doc)

    def update_run(self, run_id: str, **changes: Any) -> RunRecord | None:
        """Set fields of a run (and its updated_at); None when the run is gone."""

        def change(doc: dict[str, Any] | None) -> dict[str, Any] | None:
            if doc is None:
                return None
            doc.update(changes)
            doc["updated_at"] = time.time()
            return doc

        doc = self.docs.update("run", run_id, change)
        return None if doc is None else _from_doc(RunRecord, doc)

    def start_run(self, run_id: str, head_before: str | None) -> RunRecord | None:
        """pending -> running for this process, if still pending (None: someone else took it)."""
        taken = False

        def take(doc: dict[str, Any] | None) -> dict[str, Any] | None:
            nonlocal taken
            if doc is None or doc["status"] != "pending":
                return None
            taken = True
            now = time.time()
            doc.update(
                status="running",
                owner=self.owner,
                heartbeat=now,
                updated_at=now,
                head_before=head_before,
            )
            return doc

        doc = self.docs.update("run", run_id, take)
        return _from_doc(RunRecord, doc) if taken and doc is not None else None

    def mark_lost(self, run: RunRecord, error: dict[str, Any]) -> RunRecord | None:
        """running -> error for a run whose process is gone, unless it moved on meanwhile."""
        marked = False

        def lose(doc: dict[str, Any] | None) -> dict[str, Any] | None:
            nonlocal marked
            if doc is None or doc["status"] != "running" or doc.get("owner") != run.owner:
                return None
            marked = True
            doc.update(status="error", error=error, updated_at=time.time())
            return doc

        doc = self.docs.update("run", run.run_id, lose)
        return _from_doc(RunRecord, doc) if marked and doc is not None else None

    def stops_asked(self) -> dict[str, str]:
        """Stops other processes asked of this process's running runs (run id -> action)."""
        return {
            d["run_id"]: d["cancel"]
            for d in self.docs.scan("run", status="running", owner=self.owner)
            if d.get("cancel")
        }

    def delete_run(self, run_id: str) -> bool:
        return self.docs.delete("run", run_id)

    def runs_of(self, thread_id: str) -> list[RunRecord]:
        """The thread's runs, newest first."""
        runs = [_from_doc(RunRecord, d) for d in self.docs.scan("run", thread_id=thread_id)]
        return runs[::-1]

    def runs_with(self, status: str, *, owner: str | None = None) -> list[RunRecord]:
        """Runs in `status` (of one owner process if given), oldest first."""
        where = {"status": status} if owner is None else {"status": status, "owner": owner}
        return [_from_doc(RunRecord, d) for d in self.docs.scan("run", **where)]

    def is_lost(self, run: RunRecord, now: float | None = None) -> bool:
        """A `running` run whose process is gone (dead pid here, or a stale heartbeat)."""
        if run.status != "running" or run.owner == "queue:celery":  # Celery redelivers those
            return False
        now = time.time() if now is None else now
        if run.owner == self.owner:
            return False
        return owner_is_gone(run.owner or "") or now - (run.heartbeat or 0.0) >= self.lease_s

    def renew(self, run_ids: list[str]) -> dict[str, str]:
        """Renew the heartbeats of this process's runs; the stops asked of them (run id: action)."""
        now = time.time()
        asked: dict[str, str] = {}
        for run_id in run_ids:
            run = self.update_run(run_id, heartbeat=now)
            if run is None:
                continue
            if run.cancel:
                asked[run_id] = run.cancel
        return asked


def open_registry(checkpointer: BaseCheckpointer) -> Registry:
    """The registry in the same store as `checkpointer`, on a connection of its own."""
    from flowgraph.checkpoint.memory import MemoryCheckpointer
    from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

    if isinstance(checkpointer, MemoryCheckpointer):
        return Registry(MemoryDocs())
    if isinstance(checkpointer, SQLiteCheckpointer):
        return Registry(SQLiteDocs(checkpointer.path, timeout=checkpointer.timeout))
    kind = type(checkpointer).__name__
    if kind == "PostgresCheckpointer":
        from flowgraph.server._records.docs_servers import PostgresDocs

        return Registry(PostgresDocs(checkpointer.dsn, schema=checkpointer.schema))  # type: ignore[attr-defined]
    if kind == "RedisCheckpointer":
        import redis

        from flowgraph.server._records.docs_servers import RedisDocs

        theirs = checkpointer.client.connection_pool  # type: ignore[attr-defined]
        pool = redis.ConnectionPool(
            connection_class=theirs.connection_class, **theirs.connection_kwargs
        )
        client = redis.Redis(connection_pool=pool)
        return Registry(RedisDocs(client, prefix=checkpointer.prefix))  # type: ignore[attr-defined]
    raise TypeError(
        f"The server keeps its runs beside the checkpoints, and knows no way to do so in a "
        f"{kind}; use MemoryCheckpointer, SQLiteCheckpointer, PostgresCheckpointer or "
        "RedisCheckpointer"
    )
