"""Context variables of the running step.

Lower layers (reducers, models, tools) read these to cooperate with a run
without importing the engine: the engine sets them, everyone else only
reads or reports through the small functions below, which do nothing
outside a run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, TypeAlias, TypedDict, TypeVar

from flowgraph.errors import BudgetExceededError

__all__ = [
    "RunInfo",
    "RunUsage",
    "RunnableConfig",
    "Runtime",
    "StreamWriter",
    "TaskMemo",
    "TaskScope",
    "ToolRuntime",
    "bind_store",
    "charge_model_call",
    "charge_tool_calls",
    "current_run",
    "current_store",
    "current_task",
    "emit",
    "get_config",
    "get_runtime",
    "get_stream_writer",
    "listening",
    "message_id_factory",
    "record_tokens",
    "run_config",
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
    inline: bool = False
    """The task runs on the caller's own thread and event loop: the step's only task,
    under the sync `invoke`. Sync work inside it (a ToolNode's lone call) may run in
    place too, with nothing to overlap and no other run on the loop to hold up."""
    reuse: object | None = None
    """Tool results a branch takes from the thread's other branches instead of running
    the calls again (a `graph._thread.reuse.Reuse`; None outside a branch)."""
    metadata: Mapping[str, Any] | None = None
    """The node's `add_node(..., metadata=...)` (over that of the subgraph node it runs
    in): its config's metadata has it, as in LangGraph."""


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


StreamWriter: TypeAlias = Callable[[Any], None]
"""The "custom" stream's writer: what `get_stream_writer()` returns, and what a node
asking for a `writer` parameter (`def node(state, writer: StreamWriter)`) is given."""


def get_stream_writer() -> StreamWriter:
    """A function that sends what it is given to the run's "custom" stream.

    Call it inside a node (or a task, or a tool a node runs): when the caller
    streams `mode="custom"`, each `writer(data)` yields
    `StreamPart("custom", step, node, data)` at once, while the node runs.
    When nobody listens (`invoke`, other modes, outside a run) the writer
    does nothing, so a node may report progress unconditionally. The writer
    belongs to the task that asked for it: fetch it inside the node.
    """
    scope = current_task.get()
    if scope is None or scope.emit is None or "custom" not in scope.modes:
        return _discard
    return partial(scope.emit, "custom")


def _discard(data: Any) -> None:
    """The stream writer of a run nobody streams "custom" from."""


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


# -- what a run was started with: config, context (read by nodes and tools that ask) -------


class RunnableConfig(TypedDict, total=False):
    """The run's configuration as LangGraph hands it to a node's `config` parameter.

    `configurable` holds the caller's own values and the run's `thread_id`
    (and `checkpoint_id` when the run forked from one); `metadata` also names
    the node and step reading it (`langgraph_node`, `langgraph_step`), as
    LangGraph's does. A fresh dict each time it is asked for: a node may
    change its copy.
    """

    configurable: dict[str, Any]
    recursion_limit: int
    metadata: dict[str, Any]
    tags: list[str]
    run_id: str | None
    run_name: str


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What the caller started a run with, kept for the nodes and tools that ask for it.

    The engine sets `current_run` only for runs given something to keep (a
    thread, configurable values, a context, ...), so a plain run costs nothing.
    """

    thread_id: str | None = None
    checkpoint_id: str | None = None
    configurable: Mapping[str, Any] = field(default_factory=dict)
    """The caller's own configurable values (thread_id and checkpoint_id apart)."""
    recursion_limit: int = 100
    context: Any = None
    """`invoke(..., context=...)`, as the graph's context_schema (see `Runtime.context`)."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    run_id: str | None = None
    run_name: str | None = None


current_run: ContextVar[RunInfo | None] = ContextVar("flowgraph_current_run", default=None)
_NO_RUN_INFO = RunInfo()


def _outside(what: str) -> RuntimeError:
    return RuntimeError(
        f"{what}() reads the running graph's configuration: call it inside a node or a tool "
        "while the graph runs"
    )


def get_config() -> RunnableConfig:
    """The running graph's configuration, shaped as LangGraph's RunnableConfig.

    `get_config()["configurable"]["thread_id"]` is the run's thread (absent
    for a run without one); the caller's `configurable` values sit beside it.
    RuntimeError outside a run.
    """
    if current_task.get() is None:
        raise _outside("get_config")
    return run_config()


def run_config() -> RunnableConfig:
    """`get_config()` without the check: outside a node (a conditional edge's path, a tool
    called directly) it has no node or step in its metadata, and no thread outside a run."""
    scope = current_task.get()
    info = current_run.get() or _NO_RUN_INFO
    configurable = dict(info.configurable)
    metadata = dict(info.metadata)
    if info.thread_id is not None:
        configurable["thread_id"] = metadata["thread_id"] = info.thread_id
    if info.checkpoint_id is not None:
        configurable["checkpoint_id"] = info.checkpoint_id
    if scope is not None:
        metadata["langgraph_node"] = scope.node
        metadata["langgraph_step"] = scope.step
        if scope.metadata:
            metadata.update(scope.metadata)
    config = RunnableConfig(
        configurable=configurable,
        recursion_limit=info.recursion_limit,
        metadata=metadata,
        tags=list(info.tags),
        run_id=info.run_id,
    )
    if info.run_name is not None:
        config["run_name"] = info.run_name
    return config


ContextT = TypeVar("ContextT")


@dataclass(frozen=True, slots=True)
class Runtime(Generic[ContextT]):
    """What a node's `runtime` parameter receives: the run's context, store and stream writer.

    `context` is what the caller gave `invoke(..., context=...)` (a dict
    turned into the graph's `context_schema` when it is a dataclass or a
    pydantic model): per-run values such as a user id or a model name, kept
    out of the state and out of checkpoints. `store` is the graph's
    long-term store (`compile(store=...)`, typed loosely here since the
    store sits in a higher layer: a `flowgraph.store.BaseStore`), or None.
    `stream_writer(chunk)` streams `chunk` in mode "custom" (what
    `get_stream_writer()` returns in the same task).
    """

    context: ContextT = None  # type: ignore[assignment]  # None when the run was given none
    store: Any = None
    stream_writer: StreamWriter = _discard
    previous: Any = None
    """The functional API's previous return value (None in a graph)."""


@dataclass(frozen=True, slots=True)
class ToolRuntime(Runtime[ContextT]):
    """What a tool's `runtime: ToolRuntime` parameter receives: `Runtime` and the call's details.

    Adds the graph `state` the ToolNode read, the run's `config` and the
    `tool_call_id` being answered, as LangGraph's `ToolRuntime` does.
    """

    state: Any = None
    config: RunnableConfig = field(default_factory=lambda: RunnableConfig())
    tool_call_id: str | None = None


def get_runtime(context_schema: type[ContextT] | None = None) -> Runtime[ContextT]:
    """The running graph's `Runtime` (context, store, stream writer); RuntimeError outside a run.

    `context_schema` only types the result (`get_runtime(Ctx).context` is a Ctx).
    """
    if current_task.get() is None:
        raise _outside("get_runtime")
    info = current_run.get() or _NO_RUN_INFO
    return Runtime(
        context=info.context, store=current_store.get(), stream_writer=get_stream_writer()
    )
