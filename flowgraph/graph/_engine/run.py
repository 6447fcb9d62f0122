"""What one run carries: the compiled graph it runs (`Engine`) and its changing state (`Run`).

The run loop (`loop`) steps a `Run`; run setup (`setup`) makes one ready;
the facade and the thread API build them. Kept apart from the loop so each
can be read without the other.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flowgraph._context import RunUsage, TaskMemo, TaskScope
from flowgraph.graph._core.spec import Task, TaskResult
from flowgraph.graph._core.types import Interrupt, StreamPart
from flowgraph.graph._engine.superstep import Plan
from flowgraph.graph._thread.lease import RunLease
from flowgraph.graph._thread.record import PendingTask
from flowgraph.graph._thread.saver import Saver

if TYPE_CHECKING:
    from flowgraph.graph._core.schema import StateAdapter
    from flowgraph.graph._thread.reuse import Reuse

__all__ = ["INTERRUPT", "PASSED_UP", "Emitter", "Engine", "Run"]

INTERRUPT = "__interrupt__"
"""The node name of the stream part that says the run paused (its data: the interrupts)."""


@dataclass(slots=True)
class Engine:
    """What a compiled graph runs: its structure and state schema, fixed at compile time."""

    plan: Plan
    state: StateAdapter
    name: str
    remaining_steps: tuple[str, ...] = ()
    """State fields typed RemainingSteps, set before every step (most graphs have none)."""


PASSED_UP = frozenset({"messages", "custom"})
"""What reaches a stream from inside a subgraph node when its steps are not streamed."""


@dataclass(slots=True)
class Run:
    """Everything that changes while one invocation runs."""

    values: dict[str, Any]
    tasks: list[Task]
    scope: str
    """The key message ids derive from: unique per run, unless it continues a thread."""
    usage: RunUsage
    step: int = 0
    recursion_limit: int = 100
    steps_taken: int = 0
    join_seen: dict[int, set[str]] = field(default_factory=dict)
    sink: Callable[[StreamPart], None] | None = None
    modes: frozenset[str] = frozenset()
    subgraphs: bool = False
    """Stream the steps of subgraph nodes too, each part with its namespace."""
    passed_up: frozenset[str] = PASSED_UP
    """Without `subgraphs`: the modes whose parts from inside a subgraph node still reach
    the stream, as that node's own (model tokens and custom data, unless the caller
    asked for LangGraph's items, where only `subgraphs=True` shows them)."""
    inline_sync: bool = False
    saver: Saver | None = None
    """Writes a checkpoint after every step (None: no checkpointer, no history kept)."""
    prefilled: dict[int, TaskResult] = field(default_factory=dict)
    """Results of tasks that finished before the run stopped; the resumed step reuses them."""
    answers: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Resume values for the interrupts of the first step's tasks, by task index and key."""
    paused: dict[int, PendingTask] = field(default_factory=dict)
    """The interrupts the first step's tasks were paused at, by task index."""
    carried: dict[int, PendingTask] = field(default_factory=dict)
    """What the first step's unfinished tasks left (pauses, `once()` results), by index."""
    memos: dict[int, TaskMemo] = field(default_factory=dict)
    """The `once()` results of this step's tasks (runs with a checkpointer only)."""
    interrupt_before: frozenset[str] = frozenset()
    interrupt_after: frozenset[str] = frozenset()
    skip_breakpoint: bool = False
    """Resuming from an interrupt_before pause: run the paused step this time."""
    interrupts: list[Interrupt] = field(default_factory=list)
    """What paused the run, if it paused."""
    stop: threading.Event | None = None
    """Set by the caller (`invoke(..., stop=...)`): start no further step."""
    closed: threading.Event | None = None
    """Set by a stream's reader that stopped reading: start no further step."""
    lease: RunLease | None = None
    """The run's hold on its thread; lost (taken by another run): stop before the next step."""
    caught_up: Callable[[], Awaitable[None]] | None = None
    """Waits until a stream's reader has taken the parts so far (backpressure)."""
    nested: bool = False
    """The run of a subgraph node: a handoff (`Command.PARENT`) ends it, for its node in the
    parent graph to take."""
    parent_task: TaskScope | None = None
    """The task of the outer run this (subgraph) run belongs to: its tasks take their
    interrupt answers from it, and a pause is raised up to it."""
    metadata: Mapping[str, Any] | None = None
    """A subgraph's run: the metadata of the node that runs it (and of those above), which
    its nodes' stream parts carry under their own."""
    reuse: Reuse | None = None
    """Tool results stored by the thread's other branches, for this branch's ToolNodes
    to take instead of running the calls again (see `graph._thread.reuse`)."""


class Emitter:
    """A task's stream function (`_context.emit`): its parts tagged with its node and step.

    Code that runs on behalf of the task (a subgraph node's run, a `@task`)
    reaches the run's settings through `run`.
    """

    __slots__ = ("metadata", "node", "run", "sink", "step")

    def __init__(
        self,
        run: Run,
        sink: Callable[[StreamPart], None],
        step: int,
        node: str,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self.run = run
        self.sink = sink
        self.step = step
        self.node = node
        self.metadata = metadata
        """The node's metadata (with the enclosing subgraph nodes'), on its parts."""

    def __call__(self, mode: str, data: Any) -> None:
        if mode in self.run.modes:
            part = StreamPart(mode, self.step, self.node, data, (), False, self.metadata)  # type: ignore[arg-type]
            self.sink(part)

    def renamed(self, node: str) -> Emitter:
        """The same stream, with parts tagged as `node`'s (a `@task` running in the task)."""
        return Emitter(self.run, self.sink, self.step, node, self.metadata)


# -- tasks ----------------------------------------------------------------------
