"""The functional API: `@entrypoint` and `@task`, on the graph engine and its checkpoints.

An entrypoint is a graph of one node: its function. `invoke(x)` stores `x`
as the step's input and runs the function on it; what it returns is the
thread's state (`get_state(...).values`), and what the next invocation on
the thread gets as `previous` (unless `entrypoint.final(value=..., save=...)`
saves something else). Everything a compiled graph does, it does: threads,
the lease, streaming, `interrupt()` and `Command(resume=...)`, resuming
after a crash, history, diagrams, the CLI.

A task is a function whose result is kept. Calling it starts it (in a
thread, or as an asyncio task in async code) and returns a future, so
several run at once; its result is stored through `once()` with the
running step's pending writes the moment it returns. When the entrypoint
runs again in the same step (a resume after `interrupt()`, a retry, a
resume after the process died) a task called with the same position in
the entrypoint's order of calls returns the stored result without running:
exactly once for every call that returned. Write the entrypoint so that it
calls its tasks in the same order every time, as LangGraph also asks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import os
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, TypedDict, cast, overload

from typing_extensions import TypeVar

from flowgraph._context import TaskMemo, TaskScope, current_task, message_id_factory
from flowgraph._ids import StepIds, scope_key
from flowgraph.graph._compiled import CompiledGraph
from flowgraph.graph._core.inject import INJECTED, injected_values
from flowgraph.graph._core.interrupt import GraphInterrupt, Pause
from flowgraph.graph._core.schema import StateAdapter
from flowgraph.graph._core.types import END, START, Command, RetryPolicy
from flowgraph.graph._definition.builder import StateGraph
from flowgraph.graph._definition.validation import validate
from flowgraph.graph._engine.bridge import run_sync
from flowgraph.graph._engine.once import aonce, once, recalled
from flowgraph.graph._engine.run import Emitter

if TYPE_CHECKING:
    from collections.abc import Sequence

    from flowgraph.checkpoint.base import BaseCheckpointer

__all__ = ["Entrypoint", "EntrypointFinal", "Task", "TaskFuture", "entrypoint", "task"]

T = TypeVar("T")
R = TypeVar("R")
S = TypeVar("S")
OutputT = TypeVar("OutputT", default=Any)
"""What an entrypoint's `invoke` returns: what its function returns (`final`'s `value`)."""


# -- the entrypoint's state -------------------------------------------------------


class _Values(TypedDict, total=False):
    input: Any
    """What the current invocation was given."""
    output: Any
    """What the entrypoint last returned: the state callers see."""
    saved: Any
    """What the next invocation gets as `previous`."""


class _Reads(TypedDict, total=False):
    """What the entrypoint's node reads of the state."""

    input: Any
    saved: Any


class _EntrypointState(StateAdapter):
    """An entrypoint's state as its callers see it: the value it returned (None before)."""

    def __init__(self) -> None:
        super().__init__(_Values)
        self.visible = frozenset({"output"})

    def view(self, values: dict[str, Any]) -> Any:
        return values.get("output")

    def output(self, values: dict[str, Any]) -> Any:
        return values.get("output")

    def detached(self, values: dict[str, Any]) -> Any:
        return values.get("output")

    def shown(self, writes: Sequence[tuple[str, Any]]) -> Any:
        return dict(writes).get("output")


@dataclass(frozen=True, kw_only=True, slots=True)
class EntrypointFinal(Generic[R, S]):
    """Return `value` to the caller and keep `save` as the next invocation's `previous`."""

    value: R
    save: S


# -- tasks ------------------------------------------------------------------------


class TaskFuture(concurrent.futures.Future[T]):
    """A started task: `.result()` waits for it (sync code), `await` does too (async code)."""

    def __await__(self) -> Generator[Any, None, T]:
        return asyncio.wrap_future(self).__await__()


@dataclass(slots=True)
class _Calls:
    """The tasks one run of an entrypoint started, so it ends only once they have."""

    futures: list[TaskFuture[Any]]
    is_async: bool
    """Whether the code calling tasks here is async (tasks become asyncio tasks)."""


_calls: ContextVar[_Calls | None] = ContextVar("flowgraph_task_calls", default=None)

_executor: concurrent.futures.ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _threads() -> concurrent.futures.ThreadPoolExecutor:
    """The threads sync tasks run in (started as needed; many, since tasks wait on tasks)."""
    global _executor
    if _executor is None:
        with _executor_lock:
            if _executor is None:
                _executor = concurrent.futures.ThreadPoolExecutor(
                    max_workers=64, thread_name_prefix="flowgraph-task"
                )
    return _executor


def _after_fork() -> None:
    global _executor, _executor_lock
    _executor = None
    _executor_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


class Task(Generic[T]):
    """A function whose calls inside a run start at once and keep their results (`@task`)."""

    def __init__(
        self, fn: Callable[..., Any], *, name: str | None = None, retry: RetryPolicy | None = None
    ) -> None:
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", "task"))
        self.retry = retry
        self.is_async = inspect.iscoroutinefunction(fn)
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        return f"task({self.name})"

    def __call__(self, *args: Any, **kwargs: Any) -> TaskFuture[T]:
        """Start the task; its future gives the result (stored, on a second run of the step)."""
        future: TaskFuture[T] = TaskFuture()
        scope = current_task.get()
        if scope is None:  # outside a run: nothing to keep, just run it
            try:
                result = self.fn(*args, **kwargs)
                future.set_result(run_sync(result) if self.is_async else result)
            except Exception as exc:
                future.set_exception(exc)
            return future
        key = self._key(scope)
        done, value = recalled(key)
        if done:  # this step ran it already: the stored result, and no second run
            future.set_result(value)
            return future
        calls = _calls.get()
        if calls is not None:
            calls.futures.append(future)
        inner = self._scope(scope, key)
        if calls is not None and calls.is_async:
            body: Awaitable[Any] = (
                aonce(key, self._arun, inner, args, kwargs)
                if self.is_async
                else asyncio.to_thread(once, key, self._run, inner, args, kwargs)
            )
            _settle(future, asyncio.ensure_future(body))
        else:
            context = contextvars.copy_context()
            if self.is_async:
                job = functools.partial(run_sync, aonce(key, self._arun, inner, args, kwargs))
            else:
                job = functools.partial(once, key, self._run, inner, args, kwargs)
            _threads().submit(_into, future, context, job)
        return future

    def _key(self, scope: TaskScope) -> str:
        """The call's key: the task's name numbered by its calls so far in this attempt."""
        memo = scope.memo
        if memo is None:
            memo = scope.memo = TaskMemo()
        prefix = f"task:{self.name}"
        number = memo.calls.get(prefix, 0)
        memo.calls[prefix] = number + 1
        return f"{prefix}:{number}"

    def _scope(self, caller: TaskScope, key: str) -> TaskScope:
        """Who runs the task: the calling task, seen from the task's own place in it."""
        memo = caller.memo
        assert memo is not None
        place = f"{caller.interrupt_path}{key}"
        emit = caller.emit
        return TaskScope(
            f"{caller.node}/{self.name}",
            caller.step,
            caller.task_index,
            caller.usage,
            scope_key(caller.run_scope, caller.step, caller.task_index, place),
            emit.renamed(self.name) if isinstance(emit, Emitter) else emit,
            caller.modes,
            answers=caller.answers,
            interrupt_path=f"{place}/",
            # the same stored results, with call numbers of its own
            memo=TaskMemo(memo.values, memo.stored, memo.save, memo.save_blocks),
        )

    def _attempt(self, scope: TaskScope) -> tuple[contextvars.Token[Any], ...]:
        """Enter the task for one attempt: its scope, and message ids from its first."""
        scope.interrupts_seen = 0
        assert scope.memo is not None
        scope.memo.calls.clear()
        return (
            current_task.set(scope),
            message_id_factory.set(StepIds(scope.run_scope, scope.step, scope.task_index)),
            _calls.set(_Calls([], self.is_async)),
        )

    def _run(self, scope: TaskScope, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        attempt = 0
        while True:
            attempt += 1
            tokens = self._attempt(scope)
            try:
                return self._done(scope, self.fn(*args, **kwargs))
            except Exception as exc:
                delay = self._delay(attempt, exc)
            finally:
                _leave(tokens)
            time.sleep(delay)

    async def _arun(self, scope: TaskScope, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        attempt = 0
        while True:
            attempt += 1
            tokens = self._attempt(scope)
            try:
                return self._done(scope, await self.fn(*args, **kwargs))
            except Exception as exc:
                delay = self._delay(attempt, exc)
            finally:
                _leave(tokens)
            await asyncio.sleep(delay)

    def _done(self, scope: TaskScope, value: Any) -> Any:
        """The task's result, streamed as its update (a result recalled later is not)."""
        if scope.emit is not None:
            scope.emit("updates", value)
        return value

    def _delay(self, attempt: int, exc: Exception) -> float:
        """How long to wait before another attempt; re-raises `exc` when there is none."""
        policy = self.retry
        if policy is None or attempt >= policy.max_attempts or not policy.should_retry(exc):
            raise exc
        return policy.delay(attempt, exc)


def _leave(tokens: tuple[contextvars.Token[Any], ...]) -> None:
    scope, ids, calls = tokens
    _calls.reset(calls)
    message_id_factory.reset(ids)
    current_task.reset(scope)


def _into(future: TaskFuture[Any], context: contextvars.Context, job: Callable[[], Any]) -> None:
    """Run `job` in `context` (a worker thread) and hand its outcome to `future`."""
    try:
        value = context.run(job)
    except BaseException as exc:  # an interrupt() inside the task too: the caller re-raises it
        future.set_exception(exc)
    else:
        future.set_result(value)


def _settle(future: TaskFuture[Any], running: asyncio.Future[Any]) -> None:
    """Hand an asyncio task's outcome to `future` when it ends."""

    def done(finished: asyncio.Future[Any]) -> None:
        if finished.cancelled():
            future.cancel()
        elif (error := finished.exception()) is not None:
            future.set_exception(error)
        else:
            future.set_result(finished.result())

    running.add_done_callback(done)


@overload
def task(fn: Callable[..., Awaitable[T]], /) -> Task[T]: ...


@overload
def task(fn: Callable[..., T], /) -> Task[T]: ...


@overload
def task(
    *,
    name: str | None = None,
    retry: RetryPolicy | None = None,
    retry_policy: RetryPolicy | None = None,
) -> Callable[[Callable[..., Any]], Task[Any]]: ...


def task(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    retry: RetryPolicy | None = None,
    retry_policy: RetryPolicy | None = None,
) -> Task[Any] | Callable[[Callable[..., Any]], Task[Any]]:
    """Make `fn` a task: `@task` or `@task(name=..., retry=RetryPolicy(...))`.

    Called inside an entrypoint (or any node), a task starts at once and
    returns a `TaskFuture`: `.result()` (or `await`) gives its value. Its
    result is stored when it returns, so the same call in a later run of
    the same step (after `interrupt()`, a retry or a crash) does not run it
    again. Arguments and results must be values the checkpoint codec
    stores. `retry_policy=` is LangGraph's name for `retry=`.
    """
    policy = retry if retry is not None else retry_policy

    def make(function: Callable[..., Any]) -> Task[Any]:
        return Task(function, name=name, retry=policy)

    return make(fn) if fn is not None else make


# -- the entrypoint ----------------------------------------------------------------

_INJECTED = ("previous", *INJECTED)


def _injected(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The parameters after the input that the entrypoint is given by name."""
    parameters = list(inspect.signature(fn).parameters.values())
    if not parameters or parameters[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        raise TypeError(
            f"@entrypoint function {fn.__name__}() must take its input as its first "
            "parameter (one value; use a dict for several)"
        )
    wanted = []
    for parameter in parameters[1:]:
        if parameter.name in _INJECTED:
            wanted.append(parameter.name)
        elif parameter.default is inspect.Parameter.empty and parameter.kind not in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        ):
            raise TypeError(
                f"@entrypoint function {fn.__name__}() takes one input; its parameter "
                f"{parameter.name!r} is not one it can be given (it may ask for "
                f"{', '.join(_INJECTED)})"
            )
    return tuple(wanted)


def _given(wanted: tuple[str, ...], values: dict[str, Any]) -> dict[str, Any]:
    given = injected_values(tuple(name for name in wanted if name != "previous"))
    if "previous" in wanted:
        given["previous"] = values.get("saved")
    if "runtime" in given:  # LangGraph's Runtime carries `previous` too
        given["runtime"] = replace(given["runtime"], previous=values.get("saved"))
    return given


def _written(value: Any) -> dict[str, Any]:
    if isinstance(value, EntrypointFinal):
        return {"output": value.value, "saved": value.save}
    return {"output": value, "saved": value}


def _paused(first: GraphInterrupt, futures: Sequence[TaskFuture[Any]]) -> GraphInterrupt:
    """One pause for every task that paused (and the entrypoint's own), once all have ended."""
    concurrent.futures.wait(futures)
    return _joined(first, futures)


def _joined(first: GraphInterrupt, futures: Sequence[TaskFuture[Any]]) -> GraphInterrupt:
    pauses: list[Pause] = list(first.pauses)
    keys = {p.key for p in pauses}
    for future in futures:
        error = None if future.cancelled() else future.exception()
        if isinstance(error, GraphInterrupt):
            for pause in error.pauses:
                if pause.key not in keys:
                    keys.add(pause.key)
                    pauses.append(pause)
    return GraphInterrupt(pauses)


def _node(fn: Callable[..., Any], wanted: tuple[str, ...]) -> Callable[[_Reads], Any]:
    """The entrypoint as its graph's node: input and `previous` in, return value out."""
    if inspect.iscoroutinefunction(fn):

        async def run_async(state: _Reads) -> dict[str, Any]:
            values = cast(dict[str, Any], state)
            calls = _Calls([], is_async=True)
            token = _calls.set(calls)
            try:
                value = await fn(values.get("input"), **_given(wanted, values))
            except GraphInterrupt as paused:
                await _ended(calls.futures)
                raise _joined(paused, calls.futures) from None
            except BaseException:
                await _ended(calls.futures)
                raise
            finally:
                _calls.reset(token)
            await _ended(calls.futures)
            _raise_pauses(calls.futures)
            return _written(value)

        return run_async

    def run(state: _Reads) -> dict[str, Any]:
        values = cast(dict[str, Any], state)
        calls = _Calls([], is_async=False)
        token = _calls.set(calls)
        try:
            value = fn(values.get("input"), **_given(wanted, values))
        except GraphInterrupt as paused:
            raise _paused(paused, calls.futures) from None
        except BaseException:
            concurrent.futures.wait(calls.futures)
            raise
        finally:
            _calls.reset(token)
        concurrent.futures.wait(calls.futures)
        _raise_pauses(calls.futures)
        return _written(value)

    return run


async def _ended(futures: Sequence[TaskFuture[Any]]) -> None:
    if futures:
        await asyncio.gather(*(asyncio.wrap_future(f) for f in futures), return_exceptions=True)


def _raise_pauses(futures: Sequence[TaskFuture[Any]]) -> None:
    """A task that paused pauses the entrypoint, even if nobody asked for its result."""
    paused = [f for f in futures if not f.cancelled() and isinstance(f.exception(), GraphInterrupt)]
    if paused:
        first = cast(GraphInterrupt, paused[0].exception())
        raise _joined(first, paused)


class Entrypoint(CompiledGraph[Any, None, Any, OutputT]):
    """A function run as a graph of one node (what `@entrypoint` makes of it).

    `invoke(x)` runs the function on `x` and returns what it returned;
    `stream`, `astream`, `ainvoke`, `get_state`, `get_state_history`,
    resuming with `Command(resume=...)` or `None`, and the diagrams work as
    on any compiled graph. Its state is the last return value.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        checkpointer: BaseCheckpointer | None,
        retry: RetryPolicy | None,
        name: str,
        store: Any = None,
    ) -> None:
        builder = StateGraph(_Values)
        builder.state = _EntrypointState()
        builder.add_node(name, _node(fn, _injected(fn)), retry=retry, input_schema=_Reads)
        builder.add_edge(START, name)
        builder.add_edge(name, END)
        spec = builder.spec()
        validate(spec)
        super().__init__(
            spec,
            builder,
            checkpointer=checkpointer,
            interrupt_before=(),
            interrupt_after=(),
            budget=None,
            name=name,
            store=store,
        )
        self.fn = fn
        self.__doc__ = fn.__doc__

    def _input(self, input: Any) -> Any:
        """The function's argument, as the one field of the graph it runs in."""
        if input is not None and not isinstance(input, Command):
            return {"input": input}
        return input

    def update_state(self, thread_id: Any, values: Any, **options: Any) -> Any:
        """Set the thread's value, as if the function had returned `values` (LangGraph's way).

        `get_state` then shows it and the next invocation gets it as `previous`.
        `thread_id` and what is returned are as for a graph's `update_state`.
        """
        written = {"output": values, "saved": values}
        return super().update_state(thread_id, written, **{"as_node": self.name, **options})


class entrypoint:
    """Make a function a workflow: `@entrypoint(checkpointer=...)` (or bare `@entrypoint`).

    The function takes one input (use a dict for several values) and may ask
    for `previous` (what the last invocation on the thread returned, or
    saved with `entrypoint.final`), `writer` (the "custom" stream writer),
    `store` (the long-term store given as `store=`, a `flowgraph.store.BaseStore`),
    `config` and `runtime` by name, as a graph's node may. It may call tasks,
    `interrupt()`, and anything a node may call.
    """

    final = EntrypointFinal

    def __init__(
        self,
        checkpointer: BaseCheckpointer | None = None,
        *,
        retry: RetryPolicy | None = None,
        retry_policy: RetryPolicy | None = None,
        name: str | None = None,
        store: Any = None,
    ) -> None:
        self.checkpointer = checkpointer
        self.retry = retry if retry is not None else retry_policy
        self.name = name
        self.store = store

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and inspect.isfunction(args[0]):
            return cls()(args[0])  # bare @entrypoint
        return super().__new__(cls)

    @overload
    def __call__(
        self, fn: Callable[..., Coroutine[Any, Any, EntrypointFinal[R, Any]]]
    ) -> Entrypoint[R]: ...

    @overload
    def __call__(self, fn: Callable[..., Coroutine[Any, Any, R]]) -> Entrypoint[R]: ...

    @overload
    def __call__(self, fn: Callable[..., EntrypointFinal[R, Any]]) -> Entrypoint[R]: ...

    @overload
    def __call__(self, fn: Callable[..., R]) -> Entrypoint[R]: ...

    def __call__(self, fn: Callable[..., Any]) -> Entrypoint[Any]:
        """The workflow: `invoke` returns what `fn` returns (awaited, for an async `fn`),
        or the `value` of the `entrypoint.final` it returns."""
        return Entrypoint(
            fn,
            checkpointer=self.checkpointer,
            retry=self.retry,
            name=self.name or str(getattr(fn, "__name__", "entrypoint")),
            store=self.store,
        )
