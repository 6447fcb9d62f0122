"""The checkpoint before each input, derived on read: LangGraph's `next == ("__start__",)`.

A run stores its input and its first step in one write, so a thread holds no
checkpoint of "the state before this input". Chat UIs and time-travel code
rely on one: editing a message forks from the checkpoint before it, and
that checkpoint's parent config is how they find it. So each stored input
step `I` shows a derived checkpoint before it, `"<I>~input"`, costing no
write: its values are those of `I`'s parent (empty for a thread's first
input), it waits to run `__start__` with `I`'s input, and `I`'s parent is
shown as this checkpoint. A run started at it goes on from `I`'s parent with
the new input (a branch; from an empty state for the first input), or with
`I`'s own input again when given none.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from flowgraph._ids import scope_key
from flowgraph.errors import InvalidUpdateError
from flowgraph.graph._core.pool import call_store
from flowgraph.graph._core.types import MISSING, PULL, START, SnapshotTask, StateSnapshot
from flowgraph.graph._thread.record import record_payload

if TYPE_CHECKING:
    from flowgraph.checkpoint import serde
    from flowgraph.checkpoint.base import BaseCheckpointer, CheckpointRecord
    from flowgraph.graph._core.schema import StateAdapter
else:
    from flowgraph._lazy import LazyModule

    serde = LazyModule("flowgraph.checkpoint.serde")

__all__ = [
    "BeforeInput",
    "before_input",
    "before_input_id",
    "before_input_snapshot",
    "input_step_of",
    "is_input_step",
    "shown_parent",
]

_MARK = "~input"


def before_input_id(checkpoint_id: str) -> str:
    """The id of the derived checkpoint before the input step `checkpoint_id`."""
    return checkpoint_id + _MARK


def input_step_of(checkpoint_id: str) -> str | None:
    """The input step a derived id stands before; None for a stored checkpoint's id."""
    if checkpoint_id.endswith(_MARK):
        return checkpoint_id[: -len(_MARK)]
    return None


def is_input_step(metadata: dict[str, Any]) -> bool:
    """Whether a stored checkpoint is a run's input step (its one task is `__start__`):
    a new input's, not a `Command`'s (a resume, an update or a goto goes on from where the
    thread stands, as in LangGraph, where it makes no checkpoint before it)."""
    return metadata.get("nodes") == [START] and not metadata.get("command")


def shown_parent(snapshot: StateSnapshot) -> StateSnapshot:
    """An input step's snapshot with the derived checkpoint before it as its parent."""
    if snapshot.checkpoint_id is None or not is_input_step(snapshot.metadata):
        return snapshot
    return replace(snapshot, parent_id=before_input_id(snapshot.checkpoint_id))


@dataclass(frozen=True, slots=True)
class BeforeInput:
    """A derived checkpoint: the input step it stands before, that step's parent and input."""

    checkpoint_id: str
    step: CheckpointRecord
    metadata: dict[str, Any]
    input: Any
    """The input the step took (MISSING if its record is older than the stored input)."""

    @property
    def parent_id(self) -> str | None:
        return self.step.parent_id

    def input_for(self, given: Any) -> Any:
        """What a run started here applies: the input given, or the step's own again."""
        if given is not None:
            return given
        if self.input is MISSING:
            raise InvalidUpdateError(
                f"Checkpoint {self.checkpoint_id!r} stands before an input that was stored "
                "before flowgraph kept inputs apart; invoke it with the input to apply",
                node=START,
            )
        return self.input


async def before_input(
    checkpointer: BaseCheckpointer,
    state: StateAdapter,
    thread_id: str,
    checkpoint_id: str,
    *,
    direct: bool,
) -> BeforeInput:
    """The derived checkpoint `checkpoint_id` (see `input_step_of`), read from its step."""
    step_id = input_step_of(checkpoint_id)
    record = None
    if step_id is not None:
        record = await call_store(direct, checkpointer.get, thread_id, step_id)
    payload = record_payload(record) if record is not None else None
    if record is None or payload is None or not is_input_step(payload["metadata"]):
        raise InvalidUpdateError(
            f"Thread {thread_id!r} has no checkpoint {checkpoint_id!r}; "
            "see get_state_history() for its checkpoint ids",
            node=START,
        )
    writes = [w for node, _, w in payload.get("writes", ()) if node == START]
    input: Any = MISSING
    if writes:
        input = await call_store(direct, _decoded_input, checkpointer, state, thread_id, writes[0])
    return BeforeInput(checkpoint_id, record, payload["metadata"], input)


def _decoded_input(
    checkpointer: BaseCheckpointer,
    state: StateAdapter,
    thread_id: str,
    writes: list[list[Any]],
) -> dict[str, Any]:
    """An input step's stored writes as the input dict (message keys read back)."""
    fields = state.message_fields
    keys = {m for key, value in writes if key in fields for m in value if isinstance(m, str)}
    stored = checkpointer.messages(thread_id, keys) if keys else {}
    messages = {key: serde.loads(data) for key, data in stored.items()}
    return {
        key: [messages[m] if isinstance(m, str) else m for m in value] if key in fields else value
        for key, value in writes
    }


def before_input_snapshot(found: BeforeInput, parent: StateSnapshot) -> StateSnapshot:
    """What `get_state` shows of a derived checkpoint; `parent` is its step's parent's
    snapshot (the empty one, with no checkpoint id, for a thread's first input)."""
    step = found.step
    metadata: dict[str, Any] = {"source": "input", "step": step.step - 1, "parents": {}}
    if "run_id" in found.metadata:
        metadata["run_id"] = found.metadata["run_id"]
    task = SnapshotTask(
        id=scope_key(found.checkpoint_id, START),
        name=START,
        path=(PULL, START),
        result=None if found.input is MISSING else found.input,
    )
    return StateSnapshot(
        values=parent.values,
        next=(START,),
        checkpoint_id=found.checkpoint_id,
        parent_id=step.parent_id,
        step=step.step - 1,
        created_at=step.created_at,
        metadata=metadata,
        thread_id=step.thread_id,
        tasks=(task,),
    )
