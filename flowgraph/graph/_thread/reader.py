"""Reading a thread from its store alone, without the graph that wrote it.

The command line inspects, exports and prunes threads that some program
wrote, without importing that program. A checkpoint keeps a message field
as a list of storage keys (`<message id>#<hash>`), so which fields hold
messages is read back from the records themselves: a field whose values
are keys found in the thread's message log. A TypedDict of those fields
(annotated with `add_messages`) then replays the chain through `load`, the
same code and reducer the live run used, so the messages are exact.

Other fields are rebuilt as "the last value written": their reducers live
in the user's code, which this reader does not have.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Any, TypedDict

from flowgraph.graph._core.schema import StateAdapter
from flowgraph.graph._core.types import StateSnapshot
from flowgraph.graph._thread.record import record_payload, referenced_messages, snapshot_of
from flowgraph.graph._thread.replay import load
from flowgraph.messages import AnyMessage, RemoveMessage
from flowgraph.reducers import add_messages

if TYPE_CHECKING:
    from flowgraph.checkpoint.base import BaseCheckpointer, CheckpointRecord

__all__ = ["StoredThread"]

_KEY = re.compile(r".+#[0-9a-f]{12}\Z")
_SAMPLES_PER_FIELD = 4


def _key_lists(payload: dict[str, Any]) -> Iterable[tuple[str, list[Any]]]:
    """(field, list value) pairs of a record: its snapshot values and its writes."""
    for key, value in payload.get("values", {}).items():
        if isinstance(value, list):
            yield key, value
    for _, _, writes in payload.get("writes", ()):
        for key, value in writes:
            if isinstance(value, list):
                yield key, value


class StoredThread:
    """One thread of a checkpoint store, read with a schema recovered from its records."""

    def __init__(self, checkpointer: BaseCheckpointer, thread_id: str) -> None:
        self.checkpointer = checkpointer
        self.thread_id = thread_id
        self._records: list[CheckpointRecord] | None = None
        self._adapter: StateAdapter | None = None

    @property
    def exists(self) -> bool:
        return self.checkpointer.head(self.thread_id) is not None

    @property
    def records(self) -> list[CheckpointRecord]:
        """Every record of the thread, newest first (all branches)."""
        if self._records is None:
            self._records = self.checkpointer.history(self.thread_id)
        return self._records

    @property
    def adapter(self) -> StateAdapter:
        """A state adapter whose message fields are the ones the records show."""
        if self._adapter is None:
            self._adapter = StateAdapter(self._schema())
        return self._adapter

    @property
    def message_fields(self) -> frozenset[str]:
        return self.adapter.message_fields

    def _schema(self) -> type[Any]:
        samples: dict[str, set[str]] = {}
        removes: set[str] = set()
        names: dict[str, None] = {}
        for record in self.records:
            payload = record_payload(record)
            for key in payload.get("values", {}):
                names.setdefault(key)
            for _, _, writes in payload.get("writes", ()):  # a field no snapshot shows yet
                for key, _ in writes:
                    names.setdefault(key)
            for key, value in _key_lists(payload):
                names.setdefault(key)
                seen = samples.setdefault(key, set())
                for item in value:
                    if type(item) is RemoveMessage:
                        removes.add(key)
                    elif len(seen) < _SAMPLES_PER_FIELD and isinstance(item, str):
                        if _KEY.match(item):
                            seen.add(item)
        wanted = set().union(*samples.values()) if samples else set()
        found = set(self.checkpointer.messages(self.thread_id, wanted)) if wanted else set()
        message_fields = removes | {k for k, keys in samples.items() if keys & found}
        fields: dict[str, Any] = {
            name: Annotated[list[AnyMessage], add_messages] if name in message_fields else Any
            for name in names
        }
        schema: type[Any] = TypedDict("StoredState", fields, total=False)  # type: ignore[misc]  # fields known only now
        return schema

    def resolve(self, checkpoint_id: str) -> str | None:
        """The full id of a checkpoint given by its id or a unique prefix of it (None: none)."""
        ids = [r.checkpoint_id for r in self.records]
        if checkpoint_id in ids:
            return checkpoint_id
        matches = [i for i in ids if i.startswith(checkpoint_id)] if checkpoint_id else []
        if len(matches) > 1:
            raise LookupError(
                f"Checkpoint id prefix {checkpoint_id!r} of thread {self.thread_id!r} is "
                f"ambiguous ({len(matches)} checkpoints start with it); give more characters"
            )
        return matches[0] if matches else None

    def state(self, checkpoint_id: str | None = None) -> StateSnapshot:
        """The thread's state at its head (or at `checkpoint_id`), values as a dict."""
        head = self.checkpointer.head(self.thread_id)
        target = checkpoint_id or head
        if target is None:
            raise LookupError(f"There is no thread {self.thread_id!r} in this store")
        loaded = load(self.checkpointer, self.adapter, self.thread_id, target, head=head)
        return snapshot_of(loaded, self.adapter)

    def history(self) -> list[StateSnapshot]:
        """Every checkpoint of the thread rebuilt, newest first (all branches)."""
        return [self.state(record.checkpoint_id) for record in self.records]

    def prune(self, keep_last: int) -> tuple[int, int]:
        """Keep the head's newest `keep_last` checkpoints; (checkpoints, messages) removed.

        Like `CompiledGraph.prune`: what no kept checkpoint shows is deleted.
        """
        adapter = self.adapter  # read the message fields while every record is there
        dropped = self.checkpointer.prune(self.thread_id, keep_last)
        keep = referenced_messages(self.checkpointer, adapter, self.thread_id)
        forgotten = self.checkpointer.forget_messages(self.thread_id, keep)
        self._records = None
        return dropped, forgotten
