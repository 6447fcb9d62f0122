"""The values a graph's users hand to it and get back: frozen, keyword-only data."""

from __future__ import annotations

import random
from collections.abc import Callable, ItemsView, Iterator, KeysView, Mapping, Sequence, ValuesView
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar, get_args

from flowgraph.errors import (
    FlowgraphError,
    ModelConnectionError,
    ModelTimeoutError,
    RateLimitError,
    ServerError,
)

__all__ = [
    "END",
    "START",
    "STREAM_MODES",
    "Budget",
    "Command",
    "Interrupt",
    "ParentCommand",
    "RetryPolicy",
    "Send",
    "SnapshotTask",
    "StateSnapshot",
    "StreamMode",
    "StreamPart",
]

START = "__start__"
"""The virtual node a run begins at: `add_edge(START, "first")`."""
END = "__end__"
"""The virtual node a branch ends at: `add_edge("last", END)`."""


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True, slots=True)
class Send:
    """Run `node` once with `arg` as its input instead of the state (map-reduce fan-out)."""

    node: str
    arg: Any

    def __post_init__(self) -> None:
        if type(self.node) is not str and isinstance(self.node, str):  # a StrEnum: its name
            object.__setattr__(self, "node", str.__str__(self.node))


if TYPE_CHECKING:  # a default (PEP 696) keeps a bare `Command` hint valid under --strict
    from typing_extensions import TypeVar as DefaultingTypeVar

    N = DefaultingTypeVar("N", default=Any)
else:  # at run time the default changes nothing, and typing_extensions is not imported
    N = TypeVar("N")
"""The node names a Command may go to, for type hints: `-> Command[Literal["a", "b"]]`."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Command(Generic[N]):
    """Route and update from inside a node, or resume an interrupted run.

    Returned by a node: `update` is applied like a returned dict (or a
    list of (key, value) pairs) and `goto` names the next node(s) or
    `Send`s. With `graph=Command.PARENT`, a node inside a subgraph hands
    off to the graph that runs the subgraph: the subgraph stops, and its
    node in the parent writes `update` and goes to `goto` (nodes of the
    parent). Returned by a tool, ToolNode applies it. Given to `invoke`:
    `resume` is what the pending `interrupt()` returns (a dict keyed by
    interrupt id resumes several at once). A node's return hint
    `-> Command[Literal["a", "b"]]` declares where it may go (as
    `add_node(..., destinations=...)` does).
    """

    update: Any = None
    goto: str | Send | Sequence[str | Send] = ()
    resume: Any = MISSING
    graph: str | None = None
    """None: this graph; `Command.PARENT`: the graph that runs this one as a node."""

    PARENT: ClassVar[str] = "__parent__"

    @property
    def has_resume(self) -> bool:
        return self.resume is not MISSING

    def goto_targets(self) -> list[str | Send]:
        """The targets as a list; node names as plain str (a StrEnum's is checkpointed)."""
        goto = self.goto
        targets = [goto] if isinstance(goto, (str, Send)) else list(goto)
        return [_plain(t) for t in targets]


class ParentCommand(BaseException):
    """Raised for a node's `Command(graph=Command.PARENT)`: the subgraph stops, and the node
    that runs it in the parent graph returns the command (without `graph`) instead.

    A BaseException, so a node's `except Exception` or a RetryPolicy never takes it.
    """

    def __init__(self, command: Command[Any]) -> None:
        super().__init__(command)
        self.command = command


def _plain(target: str | Send) -> str | Send:
    return str.__str__(target) if isinstance(target, str) and type(target) is not str else target


def _is_transient(exc: BaseException) -> bool:
    """Transport errors, timeouts, HTTP 429 and 5xx: worth another attempt."""
    if isinstance(exc, (RateLimitError, ServerError, ModelTimeoutError, ModelConnectionError)):
        return True
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    if type(exc).__module__.startswith(_HTTP_MODULES):
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None)
        if status is not None:
            return bool(status == 429 or status >= 500)
        return type(exc).__name__.endswith(("TransportError", "TimeoutException")) or any(
            base.__name__ in ("TransportError", "TimeoutException") for base in type(exc).__mro__
        )
    return False


_HTTP_MODULES = ("httpx", "httpcore", "requests", "urllib3")

_BUGS = (
    ValueError,
    TypeError,
    ArithmeticError,
    ImportError,
    LookupError,
    NameError,
    SyntaxError,
    RuntimeError,
    ReferenceError,
    StopIteration,
    StopAsyncIteration,
    OSError,
)
"""Python's own errors that another attempt would only repeat: programming errors, and
OS errors other than the connection errors and timeouts `_is_transient` takes."""


def default_retry_on(exc: BaseException) -> bool:
    """What `RetryPolicy()` retries: transient failures, and exceptions of your own.

    The same split as LangGraph's default: a connection error, a timeout,
    HTTP 429 (honouring Retry-After) or 5xx is retried, and so is an
    exception class the application or a library defines (a flaky API's
    `UpstreamBusy`); Python's programming errors (ValueError, TypeError,
    KeyError, ...), other OS errors, HTTP 4xx and flowgraph's own errors
    (an invalid update, a spent budget, a refused API key) are not.
    """
    if _is_transient(exc):
        return True
    if isinstance(exc, (FlowgraphError, *_BUGS)):
        return False
    return not type(exc).__module__.startswith(_HTTP_MODULES)


def _retry_after(exc: BaseException | None) -> float | None:
    value = getattr(exc, "retry_after", None)
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


RetryOn = type[BaseException] | tuple[type[BaseException], ...] | Callable[[BaseException], bool]


@dataclass(frozen=True, kw_only=True, slots=True)
class RetryPolicy:
    """How often and how patiently to re-run a node whose attempt raised.

    A failed attempt's writes are discarded; the next attempt starts from
    the same state, so its messages get the same ids. By default
    (`default_retry_on`) transient failures are retried (connection errors,
    timeouts, HTTP 429 honouring Retry-After, 5xx) and so are exceptions of
    the application's own classes, as in LangGraph; programming errors and
    flowgraph's own errors are not.
    """

    max_attempts: int = 3
    initial_interval: float = 0.5
    backoff: float = 2.0
    max_interval: float = 30.0
    jitter: bool = True
    retry_on: RetryOn = default_retry_on
    max_retry_after: float = 60.0
    """A server asking to wait longer than this (Retry-After) is not retried: the error
    is raised, and the thread stays resumable from its last step."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("RetryPolicy.max_attempts must be at least 1")

    def should_retry(self, exc: BaseException) -> bool:
        """True when `exc` is one to retry and any Retry-After it carries is short enough."""
        retry_after = _retry_after(exc)
        if retry_after is not None and retry_after > self.max_retry_after:
            return False
        retry_on = self.retry_on
        if isinstance(retry_on, type) or isinstance(retry_on, tuple):
            return isinstance(exc, retry_on)
        return bool(retry_on(exc))

    def delay(self, attempt: int, exc: BaseException | None = None) -> float:
        """Seconds to wait before attempt `attempt + 1` (attempt counts from 1).

        Exponential backoff capped at `max_interval`, with up to 25% jitter
        (still within the cap); a provider's Retry-After (the exception's
        `retry_after`) is honoured in full, since retrying sooner only
        earns another refusal. `should_retry` refuses waits longer than
        `max_retry_after`.
        """
        wait = min(self.max_interval, self.initial_interval * self.backoff ** (attempt - 1))
        if self.jitter:
            wait = min(self.max_interval, wait * (1 + random.random() * 0.25))
        retry_after = _retry_after(exc)
        if retry_after is not None and retry_after > wait:
            wait = retry_after
        return wait


@dataclass(frozen=True, kw_only=True, slots=True)
class Budget:
    """Spending limits for one run; a call that would exceed one raises BudgetExceededError.

    The run stops after its last complete step, which stays resumable.
    """

    max_model_calls: int | None = None
    max_tool_calls: int | None = None
    max_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Interrupt:
    """A pause requested by `interrupt(value)` in `node`; resume it by `id`."""

    value: Any
    id: str
    node: str = ""

    @property
    def response_schema(self) -> None:
        """Always None: flowgraph's `interrupt()` takes no schema for its answer (LangGraph's
        field, kept readable for code that checks it)."""
        return None

    def __repr__(self) -> str:
        # LangGraph's fields, so a printed "__interrupt__" chunk reads the same
        return f"Interrupt(value={self.value!r}, id={self.id!r}, response_schema=None)"


PULL = "__pregel_pull"
PUSH = "__pregel_push"


@dataclass(frozen=True, kw_only=True, slots=True)
class SnapshotTask:
    """A task the next step of a snapshot runs, read as LangGraph's `PregelTask` is.

    In a step that stopped part-way, a task that finished holds its update
    (`result`), one that failed its error, one that paused its interrupts.
    """

    id: str
    """The task's id: the same as its subgraph namespace entry ("node:<id>")."""
    name: str
    path: tuple[Any, ...]
    """("__pregel_pull", node) for a task its edges started, ("__pregel_push", n, False)
    for the n-th `Send` of the step."""
    error: str | None = None
    """The repr of the exception the task raised, if it failed."""
    interrupts: tuple[Interrupt, ...] = ()
    state: Any = None
    """A subgraph node's config (its `checkpoint_ns`); None for other nodes."""
    result: Any = None
    """The update of a task that finished before its step stopped."""


@dataclass(frozen=True, kw_only=True, slots=True)
class StateSnapshot:
    """A thread's state at one checkpoint, and what would run next."""

    values: Any
    """The state, in the schema's type."""
    next: tuple[str, ...]
    """The nodes the next step would run (empty: the run finished)."""
    checkpoint_id: str | None
    parent_id: str | None
    step: int
    created_at: float | None
    """Unix time, seconds."""
    metadata: dict[str, Any]
    """source (input, loop, update, fork), nodes, run_id, usage."""
    interrupts: tuple[Interrupt, ...] = ()
    """Pauses waiting for `Command(resume=...)`."""
    active_run: str | None = None
    """The run working on the thread right now (None: the thread is idle)."""
    thread_id: str | None = None
    tasks: tuple[SnapshotTask, ...] = ()
    """The tasks of the next step (one per node in `next`), with what each left if the step
    stopped part-way."""

    @property
    def busy(self) -> bool:
        """Whether a run holds the thread now (a new run on it would be refused)."""
        return self.active_run is not None

    @property
    def config(self) -> dict[str, Any]:
        """This checkpoint as LangGraph's config dict names it, for code written against it.

        `invoke(None, snapshot.config)` continues (forks) from here, and
        `update_state(snapshot.config, values)` edits it.
        """
        return _checkpoint_config(self.thread_id, self.checkpoint_id)

    @property
    def parent_config(self) -> dict[str, Any] | None:
        """The parent checkpoint's config (None for a thread's first checkpoint)."""
        if self.parent_id is None:
            return None
        return _checkpoint_config(self.thread_id, self.parent_id)


def _checkpoint_config(thread_id: str | None, checkpoint_id: str | None) -> dict[str, Any]:
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


StreamMode = Literal["updates", "values", "messages", "custom", "events"]
STREAM_MODES: frozenset[str] = frozenset(get_args(StreamMode))
"""Every mode the engine streams (what `mode=` and `stream_mode=` may name)."""


@dataclass(frozen=True, slots=True)
class StreamPart:
    """One item of `stream()`: what happened (`mode`), when (`step`), where (`node`).

    `namespace` says which subgraph it comes from: `()` for the graph that was
    called, `("child:<task id>",)` for a step of the subgraph node `child`
    (one entry per level of nesting). Only `stream(..., subgraphs=True)` yields
    parts of subgraph steps; `step` and `node` are then the subgraph's own.
    """

    mode: StreamMode
    step: int
    node: str | None
    data: Any = field(default=None)
    namespace: tuple[str, ...] = ()
    cached: bool = field(default=False, repr=False)
    """An "updates" part whose writes the node did not make now: they came from the node
    cache, or from the stored writes a resumed step reuses (LangGraph's `"__metadata__":
    {"cached": True}`). Such parts come first in their step."""
    metadata: Mapping[str, Any] | None = field(default=None, repr=False)
    """The node's `add_node(..., metadata=...)` (with that of the subgraph nodes it runs
    in), on its "messages" and "updates" parts."""

    def nested(self, segment: str) -> StreamPart:
        """This part as seen one level up: `segment` ("node:task id") goes in front."""
        return StreamPart(
            self.mode,
            self.step,
            self.node,
            self.data,
            (segment, *self.namespace),
            self.cached,
            self.metadata,
        )

    # LangGraph's default stream yields {node: update} dicts (and "values" the state), which
    # ported loops read as mappings: `for update in chunk.values()`, `chunk["messages"]`.
    # An "updates" or "values" part reads the same way.

    def _mapping(self) -> Mapping[str, Any]:
        if self.mode == "updates":
            return {str(self.node): self.data}
        if self.mode == "values":
            data = self.data
            if isinstance(data, Mapping):
                return data
            fields = getattr(data, "__dict__", None)  # a pydantic state: its fields
            if isinstance(fields, dict):
                return fields
        raise TypeError(
            f"A {self.mode!r} StreamPart does not read as a mapping; use part.data "
            "(or stream(..., stream_mode=...) for LangGraph's items)"
        )

    def __getitem__(self, key: str) -> Any:
        """`part["agent"]` (updates: the node's update) or `part["messages"]` (values)."""
        return self._mapping()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._mapping()

    def __iter__(self) -> Iterator[str]:
        return iter(self._mapping())

    def get(self, key: str, default: Any = None) -> Any:
        return self._mapping().get(key, default)

    def keys(self) -> KeysView[str]:
        return self._mapping().keys()

    def values(self) -> ValuesView[Any]:
        return self._mapping().values()

    def items(self) -> ItemsView[str, Any]:
        return self._mapping().items()
