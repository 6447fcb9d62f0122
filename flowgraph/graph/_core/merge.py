"""The merge at a step's barrier: every task's writes through the state's reducers.

The run loop merges each step with it, and reading a checkpoint replays the
stored writes with it, so a rebuilt state is exactly the state the run had.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from flowgraph._context import message_id_factory
from flowgraph._ids import StepIds, scope_key

if TYPE_CHECKING:
    from flowgraph.graph._core.schema import StateAdapter
    from flowgraph.graph._core.spec import TaskResult

__all__ = ["apply_writes", "step_scope"]


def step_scope(thread_id: str, parent_id: str | None) -> str:
    """The id key of the step after `parent_id`: the same whichever run executes it, so a
    retried or resumed step makes the same message and interrupt ids."""
    return scope_key(thread_id, parent_id)


def apply_writes(
    state: StateAdapter,
    values: dict[str, Any],
    results: Sequence[TaskResult],
    *,
    scope: str,
    step: int,
) -> dict[str, Any]:
    """The state after a step: every task's writes merged in task order (not finish order).

    Reducers that make message ids see a factory scoped to the task, so the
    same step always produces the same ids.
    """
    merged = dict(values)
    # many tasks writing messages (a fan-out): one merge per message field, of every
    # task's messages in task order, gives what one merge per task gives (add_messages
    # applies an update's messages one by one) without a copy of the list per task
    gathered: dict[str, list[Any]] | None = (
        {} if len(results) > 2 and state.message_fields else None
    )
    ids = StepIds(scope, step) if state.merges_need_ids else None
    token = message_id_factory.set(ids) if ids is not None else None
    try:
        for result in results:
            if not result.writes:
                continue
            task = result.task
            if ids is not None:
                ids.start(task.index)
            for key, value in result.writes:
                if gathered is not None and key in state.message_fields:
                    gathered.setdefault(key, []).extend(value)  # checked: a list
                    continue
                try:
                    state.apply(merged, key, value)
                except Exception as exc:
                    exc.add_note(f"(merging what node '{task.node}' wrote to '{key}', step {step})")
                    raise
        if gathered:
            for key, messages in gathered.items():
                try:
                    state.apply(merged, key, messages)
                except Exception:  # again one task at a time, for the error naming its node
                    _apply_each(state, merged, values, key, results, step)
    finally:
        if token is not None:
            message_id_factory.reset(token)
    return merged


def _apply(
    state: StateAdapter, merged: dict[str, Any], key: str, value: Any, node: str, step: int
) -> None:
    try:
        state.apply(merged, key, value)
    except Exception as exc:
        exc.add_note(f"(merging what node '{node}' wrote to '{key}', step {step})")
        raise


def _apply_each(
    state: StateAdapter,
    merged: dict[str, Any],
    values: dict[str, Any],
    key: str,
    results: Sequence[TaskResult],
    step: int,
) -> None:
    """Merge each task's writes to message field `key` in turn, from the step's start."""
    if key in values:
        merged[key] = values[key]
    else:
        merged.pop(key, None)
    for result in results:
        for written, value in result.writes:
            if written == key:
                _apply(state, merged, key, value, result.task.node, step)
