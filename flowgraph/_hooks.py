"""The observer hook: how tracing watches runs, node steps, model calls and tool calls.

The engine, the model adapters and `ToolNode` know nothing of OpenTelemetry
(or any other tracer). At each of their four call sites they read
`observer`, a module attribute that is None until something (such as
`flowgraph.integrations.opentelemetry.instrument()`) sets it; while it is
None a call site costs that one read. When it is set, the call site tells
the observer that something started and gets back an `Observation`, which it
ends once with the result or the exception.

An observer is called on the thread and in the context of the work it
watches, so it may make its span the current one there (a run's for its
nodes, a node's for its model and tool calls) and undo that in `end`:
every start and its `end` happen in the same context.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

from flowgraph._context import TaskScope

__all__ = ["Observation", "Observer", "observer", "set_observer"]


class Observation(Protocol):
    """Something started that the observer watches; ended exactly once."""

    def end(self, result: Any = None, error: BaseException | None = None) -> None:
        """It finished: with `result`, or with `error` (an exception, a pause, a cancellation)."""


class Observer(Protocol):
    """What the engine, the models and `ToolNode` report to (see the module docstring)."""

    def run_started(self, graph: str, thread_id: str | None, run_id: str | None) -> Observation:
        """A run of graph `graph` starts; ended with its `Run` (checkpoint, interrupts, usage)."""

    def node_started(
        self, scope: TaskScope, attempt: int, checkpoint_id: str | None
    ) -> Observation:
        """One attempt of a task starts (`checkpoint_id`: the state it reads, when stored);
        ended with its `TaskResult`."""

    def model_started(self, provider: str, call: Any) -> Observation:
        """A chat model call starts (`call`: model, messages, tools, options); ended with the
        `AIMessage`."""

    def tool_started(self, call: Any, tool: Any) -> Observation:
        """`ToolNode` runs a tool call (`tool`: the `Tool`, None if unknown); ended with the
        `ToolMessage`."""

    def carrier(self) -> dict[str, str]:
        """The current trace context as text, for work another process picks up."""

    def continued(self, carrier: Mapping[str, str]) -> AbstractContextManager[None]:
        """While inside, work continues the trace `carrier` came from (another process's)."""


observer: Observer | None = None
"""The observer every call site reports to; None: nobody watches, nothing is done."""


def set_observer(new: Observer | None) -> Observer | None:
    """Make `new` the observer (None: stop observing); returns the one it replaces."""
    global observer
    old, observer = observer, new
    return old
