"""Context variables of the running step.

Lower layers (reducers, models, tools) read these to cooperate with a run
without importing the engine: the engine sets them, everyone else only
reads or reports through the small functions below, which do nothing
outside a run.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any

from flowgraph.errors import BudgetExceededError

__all__ = [
    "RunUsage",
    "TaskMemo",
    "TaskScope",
    "bind_store",
    "charge_model_call",
    "charge_tool_calls",
    "current_store",
    "current_task",
    "emit",
    "listening",
    "message_id_factory",
    "record_tokens",
]

message_id_factory: ContextVar[Callable[[], str] | None] = ContextVar(
    "flowgraph_message_id_factory", default=None
)
"""Makes ids for id-less messages; None means a fresh uuid4 each time."""


@dataclass(slots=True)
class RunUsage:
    """What one run has spent so far, and the Budget limits it must stay within.

    Calls are charged *before* they happen, so a limit is never exceeded:
    the call that would exceed it raises instead, inside its node, and the
    run stops after its last complete step.
    """

    max_model_calls: int | None = None
    max_tool_calls: int | None = None
    max_tokens: int | None = None
    model_calls: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def charge_model_call(self) -> None:
        if self.max_model_calls is not None and self.model_calls + 1 > self.max_model_calls:
            raise BudgetExceededError(
                f"Budget allows {self.max_model_calls} model calls and all were used; "
                "resume the thread with a larger Budget(max_model_calls=...)",
                limit_name="max_model_calls",
                limit=self.max_model_calls,
                used=self.model_calls,
            )
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            raise BudgetExceededError(
                f"Budget allows {self.max_tokens} tokens and {self.tokens} were used; "
                "resume the thread with a larger Budget(max_tokens=...)",
                limit_name="max_tokens",
                limit=self.max_tokens,
                used=self.tokens,
            )
        self.model_calls += 1

    def charge_tool_calls(self, count: int) -> None:
        if self.max_tool_calls is not None and self.tool_calls + count > self.max_tool_calls:
            raise BudgetExceededError(
                f"Budget allows {self.max_tool_calls} tool calls; {self.tool_calls} were used "
                f"and {count} more were asked for; resume the thread with a larger "
                "Budget(max_tool_calls=...)",
                limit_name="max_tool_calls",
                limit=self.max_tool_calls,
                used=self.tool_calls,
            )
        self.tool_calls += count

    def as_dict(self) -> dict[str, int]:
        return {
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }


@dataclass(slots=True)
class TaskMemo:
    """What `once()` calls of one task returned: kept across the task's retries, and
    (with a checkpointer) stored with the step's pending writes, so a resume finds it."""

    values: dict[str, Any] = field(default_factory=dict)
    """Key -> the value returned (or decoded from `stored`)."""
    stored: dict[str, bytes] = field(default_factory=dict)
    """Key -> the value's encoded bytes, as stored (what a resume starts from)."""
    save: Callable[[str, bytes], None] | None = None
    """Adds a key's bytes to `stored` and stores them (None: no checkpointer, memory only)."""
    save_blocks: bool = False
    """`save` does I/O that must not run on the event loop (async callers hop to a thread)."""
    calls: dict[str, int] = field(default_factory=dict)
    """Per-attempt counters for callers that number their calls (a model node's replies)."""


@dataclass(slots=True)
class TaskScope:
    """Who is running right now: the node, its step and task, and the run's channels."""

    node: str
    step: int
    task_index: int
    usage: RunUsage
    run_scope: str = ""
    """The thread (or run) the task belongs to; message ids derive from it."""
    emit: Callable[[str, Any], None] | None = None
    """Streams (mode, data) to the caller; None when nobody listens."""
    modes: frozenset[str] = frozenset()
    """The stream modes the caller asked for."""
    answers: dict[str, Any] = field(default_factory=dict)
    """Values given with Command(resume=...) to this task's interrupts, by their key in
    the task (shared with the tasks of a subgraph the task runs)."""
    interrupt_path: str = ""
    """Where this task sits inside the node the parent run paused ("" for the node itself;
    a subgraph's inner task adds its step and index), so interrupt keys stay distinct."""
    interrupts_seen: int = 0
    memo: TaskMemo | None = None
    """The task's `once()` results (made on first use when the run keeps no history)."""


current_task: ContextVar[TaskScope | None] = ContextVar("flowgraph_current_task", default=None)


def charge_model_call() -> None:
    """Count one model call against the run's Budget (raises if none is left)."""
    scope = current_task.get()
    if scope is not None:
        scope.usage.charge_model_call()


def record_tokens(input_tokens: int, output_tokens: int) -> None:
    """Add a call's token usage to the run's totals."""
    scope = current_task.get()
    if scope is not None:
        scope.usage.input_tokens += input_tokens
        scope.usage.output_tokens += output_tokens


def charge_tool_calls(count: int) -> None:
    """Count tool calls against the run's Budget (raises if they would exceed it)."""
    scope = current_task.get()
    if scope is not None:
        scope.usage.charge_tool_calls(count)


def listening(mode: str) -> bool:
    """True inside a run whose caller streams `mode` (e.g. "messages": stream tokens)."""
    scope = current_task.get()
    return scope is not None and scope.emit is not None and mode in scope.modes


def emit(mode: str, data: Any) -> None:
    """Send `data` to the run's stream in `mode` (e.g. "messages"), if anyone listens."""
    scope = current_task.get()
    if scope is not None and scope.emit is not None:
        scope.emit(mode, data)


current_store: ContextVar[Any] = ContextVar("flowgraph_current_store", default=None)
"""The long-term store of the running graph (a `flowgraph.store.BaseStore`), or None.

Typed `Any` because the store lives in a higher layer; `InjectedStore` tool
parameters and `flowgraph.store.get_store()` read it."""


def bind_store(store: Any) -> Token[Any]:
    """Make `store` the long-term store of everything that runs in this context from now on.

    The engine calls it when a run of a graph compiled with a store starts,
    before any node runs, and `current_store.reset(token)` with the returned
    token when the run ends. Tasks and worker threads started afterwards copy
    the context, so every node, tool and subgraph of the run sees the store;
    a subgraph compiled without a store of its own keeps its parent's. Passing
    None hides an outer run's store from this context.
    """
    return current_store.set(store)
