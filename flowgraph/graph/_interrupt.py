"""interrupt(): pause a run inside a node until a person (or a program) answers.

The node runs again from its start when the thread is resumed with
`invoke(Command(resume=value), thread_id=...)`; this time `interrupt()`
returns `value`. Code before the call therefore runs twice: keep it
idempotent (or move side effects after the interrupt).
"""

from __future__ import annotations

from typing import Any

from flowgraph._context import current_task
from flowgraph.graph._types import Interrupt

__all__ = ["GraphInterrupt", "interrupt"]


class GraphInterrupt(BaseException):
    """Raised by interrupt() to unwind the node; the engine catches it.

    It derives from BaseException so that a node's `except Exception`
    cannot swallow the pause by accident.
    """

    def __init__(self, interrupt: Interrupt) -> None:
        super().__init__(interrupt)
        self.interrupt = interrupt


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
    if position < len(scope.resume_values):
        return scope.resume_values[position]
    interrupt_id = f"{scope.run_scope}-{scope.step}-{scope.task_index}-i{position}"
    raise GraphInterrupt(Interrupt(value, interrupt_id, scope.node))
