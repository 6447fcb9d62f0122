"""once(): a side effect inside a node that runs at most once, whatever happens to the node.

A node may run more than once: a RetryPolicy attempt, a resume after an
exception or after the process was killed, a resume after an interrupt
all start it again from the top. `once(key, fn, ...)` calls `fn` the first
time and stores its result with the step's pending writes the moment it
returns; every later run of the same task in the same step gets the stored
result back without calling `fn`. A call cut off while `fn` runs (SIGKILL
mid-call) has no result to store and runs again: exactly once for every
call that returned, at least once for one that was cut off.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from flowgraph._context import TaskMemo, TaskScope, current_task
from flowgraph._lazy import LazyModule
from flowgraph.errors import DeserializationError, SerializationError
from flowgraph.graph._core.pool import finish_off_loop

if TYPE_CHECKING:
    from flowgraph.checkpoint import serde
else:  # runs without a checkpointer never encode: the codec loads with the first write
    serde = LazyModule("flowgraph.checkpoint.serde")

__all__ = ["aonce", "call_key", "once", "recalled"]

T = TypeVar("T")
_NOTHING: Any = object()


def _memo(scope: TaskScope) -> TaskMemo:
    memo = scope.memo
    if memo is None:  # a run without a checkpointer: the task's retries share it
        memo = scope.memo = TaskMemo()
    return memo


def _recall(memo: TaskMemo, key: str) -> Any:
    """The value stored under `key`, or `_NOTHING`."""
    found = memo.values.get(key, _NOTHING)
    if found is _NOTHING and key in memo.stored:
        try:
            found = memo.values[key] = serde.loads(memo.stored[key])
        except DeserializationError as exc:
            raise DeserializationError(
                f"The stored result of once({key!r}) cannot be read back: {exc}"
            ) from exc
    return found


def _encode(memo: TaskMemo, scope: TaskScope, key: str, value: Any) -> bytes | None:
    """The value's bytes for the store (None when the run keeps no history)."""
    if memo.save is None:
        return None
    try:
        return serde.dumps(value)
    except SerializationError as exc:
        raise SerializationError(
            f"once({key!r}) in node '{scope.node}' returned a value that cannot be stored, "
            f"so it could run again after a crash: {exc}. Return plain data (str, numbers, "
            "lists, dicts, messages) or register the type with serde.register().",
            path=exc.path,
            type_name=exc.type_name,
        ) from exc


def once(key: str, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Call `fn(*args, **kwargs)` at most once per (thread, step, task, key); return its result.

    Inside a node, the result is stored the moment `fn` returns; a retry or
    resume of the same task in the same step returns it without calling
    `fn` again. The result must be a value the checkpoint codec stores
    (else SerializationError naming the key). Outside a run, `fn` is
    simply called. In an async node use `aonce`, which does not block the
    event loop while the result is stored.
    """
    scope = current_task.get()
    if scope is None:
        return fn(*args, **kwargs)
    memo = _memo(scope)
    full_key = scope.interrupt_path + key
    found = _recall(memo, full_key)
    if found is not _NOTHING:
        return found  # type: ignore[no-any-return]  # what fn returned the first time
    value = fn(*args, **kwargs)
    data = _encode(memo, scope, key, value)
    memo.values[full_key] = value
    if data is not None and memo.save is not None:
        memo.save(full_key, data)
    return value


async def aonce(key: str, fn: Callable[..., Awaitable[T]], /, *args: Any, **kwargs: Any) -> T:
    """`once` for async code: `fn` is a coroutine function (or returns an awaitable)."""
    scope = current_task.get()
    if scope is None:
        return await fn(*args, **kwargs)
    memo = _memo(scope)
    full_key = scope.interrupt_path + key
    found = _recall(memo, full_key)
    if found is not _NOTHING:
        return found  # type: ignore[no-any-return]  # what fn returned the first time
    value = await fn(*args, **kwargs)
    data = _encode(memo, scope, key, value)
    memo.values[full_key] = value
    if data is not None and memo.save is not None:
        if memo.save_blocks:
            await finish_off_loop(memo.save, full_key, data)
        else:
            memo.save(full_key, data)
    return value


def recalled(key: str) -> tuple[bool, Any]:
    """Whether `once(key, ...)` in this task already has a result (a retry, a resume), and it.

    For callers that must know before they start the work (a `@task` returns a
    finished future at once instead of starting a thread).
    """
    scope = current_task.get()
    if scope is None:
        return False, None
    found = _recall(_memo(scope), scope.interrupt_path + key)
    return (False, None) if found is _NOTHING else (True, found)


def call_key(prefix: str) -> str:
    """`prefix` numbered by how often this attempt of the task asked for it ("model:0", ...).

    For prebuilt nodes that call something once per invocation: a retried
    attempt numbers its calls from 0 again, so its keys match the first's.
    """
    scope = current_task.get()
    if scope is None:
        return prefix
    calls = _memo(scope).calls
    number = calls.get(prefix, 0)
    calls[prefix] = number + 1
    return f"{prefix}:{number}"
