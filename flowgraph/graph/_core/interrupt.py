"""interrupt(): pause a run inside a node until a person (or a program) answers.

The node runs again from its start when the thread is resumed with
`invoke(Command(resume=value), thread_id=...)`; this time `interrupt()`
returns `value`. Code before the call therefore runs twice: keep it
idempotent (or move side effects after the interrupt). A node that is a
subgraph runs again from the subgraph's start, and each `interrupt()` in
it returns its answer in turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from flowgraph._context import current_task
from flowgraph.graph._core.types import Interrupt

__all__ = ["INTERRUPT_KEY", "GraphInterrupt", "Pause", "interrupt", "with_interrupts"]

INTERRUPT_KEY = "__interrupt__"
"""Where `invoke` puts the interrupts a run paused at, as LangGraph's does."""


@dataclass(frozen=True, slots=True)
class Pause:
    """An interrupt and its key inside the paused task: where its answer goes on resume.

    The key ("i0", or "3.1.i0" inside a subgraph: inner step, task, position)
    depends only on where the call sits in the task, never on the
    checkpoint, so an answer finds its interrupt however the thread's head
    moved since (an update_state in between, say).
    """

    interrupt: Interrupt
    key: str


class GraphInterrupt(BaseException):
    """Raised by interrupt() to unwind the node; the engine catches it.

    It derives from BaseException so that a node's `except Exception`
    cannot swallow the pause by accident. A subgraph re-raises the pauses
    of its inner tasks (several, if parallel ones paused) to its own node.
    """

    def __init__(self, pauses: Sequence[Pause]) -> None:
        super().__init__(*(p.interrupt for p in pauses))
        self.pauses = list(pauses)

    @property
    def interrupt(self) -> Interrupt:
        return self.pauses[0].interrupt


def interrupt(value: Any = None) -> Any:
    """Pause the run and show `value` to the caller; return the resume value when resumed.

    Several calls in one node are answered in order; each has a stable id
    (see `get_state(...).interrupts`) to resume it by.
    """
    scope = current_task.get()
    if scope is None:
        raise RuntimeError(
            "interrupt() pauses a running graph: call it inside a node, "
            "in a graph compiled with a checkpointer"
        )
    position = scope.interrupts_seen
    scope.interrupts_seen = position + 1
    key = f"{scope.interrupt_path}i{position}"
    answers = scope.answers
    if key in answers:
        return answers[key]
    interrupt_id = f"{scope.run_scope}-{scope.step}-{scope.task_index}-i{position}"
    raise GraphInterrupt([Pause(Interrupt(value, interrupt_id, scope.node), key)])


def with_interrupts(out: Any, interrupts: Sequence[Interrupt]) -> Any:
    """A paused run's result, telling the caller why it paused, as LangGraph's `invoke` does.

    A dict (TypedDict state) gets the key `"__interrupt__"`: the list of
    `Interrupt`s waiting for `Command(resume=...)`. A pydantic state is
    returned with the same list readable as `state["__interrupt__"]` (a
    `MessagesState` reads as a mapping) and `state.__interrupt__`; it is not
    a field, so it is not validated, dumped or compared.
    """
    waiting = list(interrupts)
    if isinstance(out, dict):
        out[INTERRUPT_KEY] = waiting
    elif isinstance(out, BaseModel):
        out.__dict__[INTERRUPT_KEY] = waiting
    return out
