"""The one run loop: supersteps until no task is left.

Each step runs its tasks concurrently (async nodes as tasks, sync nodes in
threads; a lone sync node under the sync API runs inline, with nothing to
overlap), merges their writes at the barrier in task order, routes, and
hands the finished step to the checkpoint hook. `invoke`, `stream` and
their async twins all drive this loop; the sync API is a bridge over it.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import flowgraph._hooks as _hooks
from flowgraph._context import TaskMemo, TaskScope, current_task, message_id_factory
from flowgraph._ids import StepIds
from flowgraph.errors import GraphRecursionError, GraphValidationError, InvalidUpdateError
from flowgraph.graph._core.interrupt import GraphInterrupt, Pause
from flowgraph.graph._core.merge import apply_writes
from flowgraph.graph._core.pool import run_in_thread
from flowgraph.graph._core.spec import Task, TaskResult
from flowgraph.graph._core.types import MISSING, Command, Interrupt, ParentCommand, Send, StreamPart
from flowgraph.graph._engine.cache import CacheHit
from flowgraph.graph._engine.run import INTERRUPT, Emitter, Engine, Run
from flowgraph.graph._engine.superstep import next_tasks
from flowgraph.graph._thread.record import PendingTask

if TYPE_CHECKING:
    from flowgraph.graph._core.spec import Branch

__all__ = ["run_loop", "start_tasks", "stream_pause"]


def _result(engine: Engine, task: Task, out: Any) -> TaskResult:
    """A node's return value as checked writes and routes; anything else is a clear error."""
    node = task.node
    if type(out) is dict or isinstance(out, Mapping):  # what nodes return most, first
        return TaskResult(task, list(engine.state.check_update(node, out).items()))
    if out is None:
        return TaskResult(task)
    if type(out) is CacheHit:  # a cached node's earlier result: the same checks
        result = _result(engine, task, out.value)
        result.cached = True
        return result
    if isinstance(out, Command):
        if out.has_resume:
            raise InvalidUpdateError(
                f"Node '{node}' returned Command(resume=...); resume is given to invoke(), "
                "not returned by a node",
                node=node,
            )
        if out.graph is not None:
            if out.graph == Command.PARENT:  # a handoff: the node running this graph goes on
                raise ParentCommand(replace(out, graph=None))
            raise InvalidUpdateError(
                f"Node '{node}' returned Command(graph={out.graph!r}); graph is None (this "
                "graph) or Command.PARENT (the graph that runs this one as a node)",
                node=node,
            )
        writes = [] if out.update is None else _command_writes(engine, node, out.update)
        return TaskResult(task, writes, out.goto_targets())
    if engine.state.is_model and isinstance(out, engine.state.schema):
        fields = {k: getattr(out, k) for k in out.model_fields_set}
        return TaskResult(task, list(engine.state.check_update(node, fields).items()))
    if engine.state.is_dataclass and isinstance(out, engine.state.schema):
        # the state's type returned whole: every field is written, as in LangGraph
        fields = {k: getattr(out, k) for k in engine.state.reducers if hasattr(out, k)}
        return TaskResult(task, list(engine.state.check_update(node, fields).items()))
    raise InvalidUpdateError(
        f"Node '{node}' returned {type(out).__name__}; a node returns a dict of updates, "
        "a Command, or None",
        node=node,
    )


def _command_writes(engine: Engine, node: str, update: Any) -> list[tuple[str, Any]]:
    """A Command's update as checked writes: a dict of fields, or (key, value) pairs in order."""
    if isinstance(update, Mapping):
        return list(engine.state.check_update(node, update).items())
    if isinstance(update, (list, tuple)) and all(
        isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[0], str)
        for pair in update
    ):
        writes: list[tuple[str, Any]] = []
        for key, value in update:
            writes.extend(engine.state.check_update(node, {key: value}).items())
        return writes
    raise InvalidUpdateError(
        f"Node '{node}' returned Command(update=...) with a {type(update).__name__}; update "
        "must be a dict of fields or a list of (field, value) pairs",
        node=node,
    )


async def _call(fn: Callable[..., Any], arg: Any, *, is_async: bool, inline: bool) -> Any:
    if is_async:
        return await fn(arg)
    out = fn(arg) if inline else await run_in_thread(fn, arg)
    if type(out) is not dict and out is not None and inspect.isawaitable(out):
        out = await out  # a sync callable that returned a coroutine (e.g. a partial)
    return out


def _awaitable(out: Any) -> bool:
    """`inspect.isawaitable`, answered at once for what nodes and branches usually return."""
    return type(out) not in _PLAIN_RESULTS and inspect.isawaitable(out)


_PLAIN_RESULTS = frozenset({dict, str, list, tuple, type(None)})


def _in_task(out: Any) -> Any:
    """An awaitable a sync callable returned, made a Task if none runs: a sync run of an
    all-sync graph steps its loop by hand (`run_sync`), and async code may need a current
    Task (`asyncio.timeout`, anyio), as it has under `ainvoke`."""
    return out if asyncio.current_task() is not None else asyncio.ensure_future(out)


async def _run_task(engine: Engine, run: Run, task: Task, step: int, inline: bool) -> TaskResult:
    spec = engine.plan.nodes[task.node]
    meta = _metadata(run, spec.metadata)
    emit = None if run.sink is None else Emitter(run, run.sink, step, task.node, meta)
    scope = TaskScope(task.node, step, task.index, run.usage, run.scope, emit, run.modes)
    scope.inline = inline
    scope.metadata = meta
    parent = run.parent_task
    if parent is not None:
        scope.answers = parent.answers
        scope.interrupt_path = f"{parent.interrupt_path}{step}.{task.index}."
        scope.reuse = parent.reuse
    else:
        if run.answers:
            scope.answers = run.answers.get(task.index, {})
        scope.reuse = run.reuse
    if parent is not None:
        scope.memo = parent.memo if parent.memo is not None else _plain_memo(parent)
    elif run.saver is not None:
        scope.memo = run.memos[task.index] = _stored_memo(run, task)
    token = current_task.set(scope)
    events = "events" in run.modes
    started = time.perf_counter() if events else 0.0
    if events:
        scope.emit("events", {"event": "start", "task": task.index})  # type: ignore[misc]
    attempt = 0
    try:
        while True:
            attempt += 1
            if task.arg is not MISSING:
                arg = task.arg
            else:  # the state, or the node's own input type's view of it
                arg = (spec.view or engine.state.node_view)(run.values)
            scope.interrupts_seen = 0
            if scope.memo is not None and scope.memo.calls:
                scope.memo.calls.clear()
            # every attempt numbers its messages from the start: a retry re-emits the same ids
            ids = message_id_factory.set(StepIds(run.scope, step, task.index))
            observer = _hooks.observer
            seen = None if observer is None else _watch(observer, run, scope, attempt)
            try:
                # the common cases inline: no extra coroutine per task
                if spec.is_async:
                    out = await spec.fn(arg)
                elif inline:
                    out = spec.fn(arg)
                    if _awaitable(out):
                        out = await _in_task(out)  # a sync callable that returned a coroutine
                else:
                    out = await _call(spec.fn, arg, is_async=False, inline=False)
                result = _result(engine, task, out)
                if seen is not None:
                    seen.end(result)
                break
            except Exception as exc:
                if seen is not None:
                    seen.end(error=exc)
                policy = spec.retry_for(exc) if spec.retries else None
                if policy is None or attempt >= policy.max_attempts:
                    raise
                await asyncio.sleep(policy.delay(attempt, exc))
            except BaseException as exc:  # a pause (interrupt()) or a cancellation
                if seen is not None:
                    seen.end(error=exc)
                raise
            finally:
                message_id_factory.reset(ids)
    except Exception as exc:
        exc.add_note(f"(in node '{task.node}', step {step}, attempt {attempt})")
        if events:
            scope.emit(  # type: ignore[misc]
                "events",
                {
                    "event": "error",
                    "task": task.index,
                    "duration": time.perf_counter() - started,
                    "error": f"{type(exc).__name__}: {exc}",
                },
            )
        raise
    finally:
        current_task.reset(token)
    if events:
        scope.emit(  # type: ignore[misc]
            "events",
            {"event": "end", "task": task.index, "duration": time.perf_counter() - started},
        )
    return result


def _metadata(run: Run, own: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """A node's metadata for its stream parts: its own over its subgraph node's."""
    if run.metadata is None or own is None:
        return own if run.metadata is None else run.metadata
    return {**run.metadata, **own}


def _watch(
    observer: _hooks.Observer, run: Run, scope: TaskScope, attempt: int
) -> _hooks.Observation:
    """Tell the observer a task attempt starts, reading the checkpoint its state comes from."""
    return observer.node_started(scope, attempt, run.saver.cursor.head if run.saver else None)


def _plain_memo(scope: TaskScope) -> TaskMemo:
    memo = scope.memo = TaskMemo()
    return memo


def _stored_memo(run: Run, task: Task) -> TaskMemo:
    """A task's `once()` results, each stored with the step's pending writes as it comes."""
    saver = run.saver
    assert saver is not None
    carried = run.carried.get(task.index) if run.carried else None
    row = PendingTask(
        task.node,
        pauses=carried.pauses if carried is not None else [],
        answers=run.answers.get(task.index, {}) if run.answers else {},
        memo=dict(carried.memo) if carried is not None else {},
    )
    return TaskMemo(
        stored=row.memo,
        save=partial(saver.save_memo, task.index, row, lock=threading.Lock()),
        save_blocks=not saver.direct,
    )


async def _run_tasks(engine: Engine, run: Run, step: int) -> list[TaskResult | BaseException]:
    """Run the step's tasks concurrently; outcomes in task order.

    Siblings of a failed or interrupted task still finish, so their writes
    can be kept as pending and a resume need not run them again. Tasks that
    finished before a resume are not run again either.
    """
    tasks = run.tasks
    prefilled = run.prefilled
    todo = [t for t in tasks if t.index not in prefilled]
    outcomes = await asyncio.gather(
        *(_run_task(engine, run, task, step, False) for task in todo), return_exceptions=True
    )
    done = dict(zip((t.index for t in todo), outcomes, strict=True))
    return [prefilled[t.index] if t.index in prefilled else done[t.index] for t in tasks]


# -- routing --------------------------------------------------------------------


def _branch_targets(branch: Branch, out: Any) -> list[str | Send]:
    items = out if isinstance(out, (list, tuple)) else [out]
    targets: list[str | Send] = []
    for item in items:
        if isinstance(item, Send):
            targets.append(item)
        elif branch.path_map is not None:
            try:
                targets.append(branch.path_map[item])
            except (KeyError, TypeError):
                raise GraphValidationError(
                    f"The branch from '{branch.source}' returned {item!r}, which its path_map "
                    f"does not have; expected one of {list(branch.path_map)}",
                    node=branch.source,
                ) from None
        elif isinstance(item, str):
            targets.append(item)
        else:
            raise GraphValidationError(
                f"The branch from '{branch.source}' returned {item!r}; a branch returns a node "
                "name, END, a Send, or a list of them",
                node=branch.source,
            )
    return targets


async def _routes(
    engine: Engine,
    values: dict[str, Any],
    sources: Sequence[tuple[str, list[str | Send]]],
    step: int = 0,
) -> list[tuple[str, Sequence[str | Send]]]:
    """Each finished node's next targets: plain edges, its Command's goto, then its branches."""
    plan = engine.plan
    view: Any = MISSING
    routes: list[tuple[str, Sequence[str | Send]]] = []
    for node, goto in sources:
        branches = plan.branches.get(node)
        if branches is None and not goto:  # plain edges only: the compiled tuple will do
            routes.append((node, plan.successors.get(node, ())))
            continue
        targets: list[str | Send] = [*plan.successors.get(node, ()), *goto]
        for branch in branches or ():
            if view is MISSING:
                view = engine.state.node_view(values)
            try:
                out = branch.path(view)
                if branch.is_async:
                    out = await out
                elif _awaitable(out):
                    out = await _in_task(out)
            except Exception as exc:
                exc.add_note(f"(in the conditional edge from '{node}', after step {step})")
                raise
            if type(out) is str:  # a node name or END, maybe through the path_map
                path_map = branch.path_map
                target = out if path_map is None else path_map.get(out)
                if target is not None:
                    targets.append(target)
                    continue
            targets.extend(_branch_targets(branch, out))
        routes.append((node, targets))
    return routes


async def start_tasks(engine: Engine, run: Run, source: str) -> None:
    """Plan the first tasks after `source` (START, or a node given by update_state)."""
    routes = await _routes(engine, run.values, [(source, [])], run.step)
    run.tasks = next_tasks(engine.plan, routes, run.join_seen)


# -- the loop -------------------------------------------------------------------


async def run_loop(engine: Engine, run: Run) -> None:
    """Run supersteps until no task is left or the run pauses; `run.values` is the state."""
    while run.tasks:
        if run.caught_up is not None:
            await run.caught_up()
        if run.stop is not None and run.stop.is_set():
            return
        if run.closed is not None and run.closed.is_set():
            return
        if run.lease is not None and run.lease.lost:
            run.lease.check()
        if run.steps_taken >= run.recursion_limit:
            names = ", ".join(sorted({t.node for t in run.tasks}))
            raise GraphRecursionError(
                f"Recursion limit of {run.recursion_limit} steps reached without reaching END: "
                f"{run.steps_taken} steps ran, next nodes: {names}. If the graph loops on "
                "purpose, pass a larger "
                "recursion_limit to invoke(); otherwise check the condition that should "
                "route to END.",
                limit=run.recursion_limit,
                nodes=tuple(t.node for t in run.tasks),
            )
        if run.interrupt_before and not run.skip_breakpoint:
            paused = [t for t in run.tasks if t.node in run.interrupt_before]
            if paused:
                await _pause_before(run, paused)
                return
        run.skip_breakpoint = False
        if engine.remaining_steps:
            left = run.recursion_limit - 1 - run.steps_taken
            run.values = {**run.values, **dict.fromkeys(engine.remaining_steps, left)}
        step = run.step + 1
        if run.saver is not None:
            run.scope = run.saver.step_scope()
        early: frozenset[int] = frozenset()
        if run.prefilled and run.sink is not None:
            # what a resumed step reuses is streamed first, as LangGraph's cached writes are
            early = frozenset(run.prefilled)
            reused = [run.prefilled[t.index] for t in run.tasks if t.index in early]
            _stream_updates(engine, run, step, reused)
        if len(run.tasks) == 1 and not run.prefilled:
            # the usual step of a loop (one node): run it here, no gather and no outcome list
            try:
                results = [await _run_task(engine, run, run.tasks[0], step, run.inline_sync)]
            except (Exception, GraphInterrupt, ParentCommand) as exc:
                await _stop_step(engine, run, [exc], step)
                return
        else:
            outcomes = await _run_tasks(engine, run, step)
            results = [o for o in outcomes if isinstance(o, TaskResult)]
            if len(results) != len(outcomes):
                await _stop_step(engine, run, outcomes, step, early)
                return
        if run.prefilled:  # only the first step of a resume has these
            run.prefilled = {}
        if run.answers:
            run.answers = {}
        if run.paused:
            run.paused = {}
        if run.carried:
            run.carried = {}
        if run.memos:
            run.memos = {}
        values = apply_writes(engine.state, run.values, results, scope=run.scope, step=step)
        routes = await _routes(engine, values, [(r.task.node, r.goto) for r in results], step)
        tasks = next_tasks(engine.plan, routes, run.join_seen)
        if run.saver is not None:
            await run.saver.save_step(
                values,
                results,
                tasks,
                run.join_seen,
                run.usage,
                step,
                release=None if tasks else run.lease,  # no task left: the run's last write
            )
        run.values = values
        run.tasks = tasks
        run.step = step
        run.steps_taken += 1
        if run.sink is not None:
            _stream_step(engine, run, results, early)
        if (
            run.interrupt_after
            and tasks
            and any(r.task.node in run.interrupt_after for r in results)
        ):
            stream_pause(run, ())
            return


async def _pause_before(run: Run, paused: Sequence[Task]) -> None:
    """Stop before a step with an interrupt_before node; resuming runs that step."""
    if run.saver is None:
        raise InvalidUpdateError(
            "interrupt_before needs a checkpointer to resume from; compile(checkpointer=...)"
        )
    markers = {t.index: PendingTask(t.node, breakpoint=True) for t in paused}
    await run.saver.save_pending(markers)
    stream_pause(run, ())


async def _stop_step(
    engine: Engine,
    run: Run,
    outcomes: Sequence[TaskResult | BaseException],
    step: int,
    streamed: frozenset[int] = frozenset(),
) -> None:
    """A step that did not finish: keep what did, then raise the failure or record the pause.

    A subgraph's node handing off to the parent graph (`Command.PARENT`)
    ends the subgraph run here: its node in the parent takes the command.
    """
    handoff = next((o for o in outcomes if isinstance(o, ParentCommand)), None)
    if handoff is not None:
        if run.nested:  # a subgraph: its node in the parent goes on
            raise handoff
        outcomes = [
            _no_parent(task.node) if isinstance(o, ParentCommand) else o
            for task, o in zip(run.tasks, outcomes, strict=True)
        ]
    pending: dict[int, PendingTask] = {}
    pauses: list[Pause] = []
    failure: BaseException | None = None
    for task, outcome in zip(run.tasks, outcomes, strict=True):
        memo = run.memos.get(task.index)
        kept = dict(memo.stored) if memo is not None else {}
        if isinstance(outcome, TaskResult):
            pending[task.index] = PendingTask(task.node, writes=outcome.writes, goto=outcome.goto)
        elif isinstance(outcome, GraphInterrupt):
            pending[task.index] = PendingTask(
                task.node,
                pauses=outcome.pauses,
                answers=run.answers.get(task.index, {}),
                memo=kept,
            )
            pauses.extend(outcome.pauses)
        else:
            # the failure, for get_state's tasks (and the answers it was given, if it had
            # paused before, for the next resume)
            before = run.paused.get(task.index)
            pending[task.index] = PendingTask(
                task.node,
                pauses=before.pauses if before is not None else [],
                answers=run.answers.get(task.index, {}) if before is not None else {},
                memo=kept,
                error=repr(outcome) if isinstance(outcome, Exception) else None,
            )
            if failure is None:
                failure = outcome
    if failure is None and run.sink is not None:
        # the tasks that finished before the pause, as LangGraph streams them
        done = [o for o in outcomes if isinstance(o, TaskResult)]
        _stream_updates(engine, run, step, [r for r in done if r.task.index not in streamed])
    if failure is None and run.parent_task is not None:
        raise GraphInterrupt(pauses)  # a subgraph: its node pauses, and re-runs on resume
    run.interrupts.extend(p.interrupt for p in pauses)
    if failure is None and run.saver is None:
        raise InvalidUpdateError(
            f"Node '{run.interrupts[0].node}' called interrupt(), which needs a checkpointer "
            "to resume from; compile(checkpointer=...) and pass a thread_id",
            node=run.interrupts[0].node,
        )
    if run.saver is not None:
        await run.saver.save_pending(pending)
    if failure is not None:
        raise failure
    stream_pause(run, run.interrupts)


def _no_parent(node: str) -> InvalidUpdateError:
    return InvalidUpdateError(
        f"Node '{node}' returned Command(graph=Command.PARENT), but its graph runs on its "
        "own, not as a node of another; add the graph to a parent graph as a node "
        "(add_node(name, compiled_graph)), or drop graph= to route within this graph",
        node=node,
    )


def _stream_updates(engine: Engine, run: Run, step: int, results: Sequence[TaskResult]) -> None:
    """The "updates" parts of `results`: the cached ones first (as LangGraph streams a
    cache hit before the step's other tasks finish), each group in task order."""
    if "updates" not in run.modes or not results:
        return
    sink = run.sink
    assert sink is not None
    shown = engine.state.shown
    if any(r.cached for r in results):
        results = [*(r for r in results if r.cached), *(r for r in results if not r.cached)]
    nodes = engine.plan.nodes
    for r in results:
        spec = nodes.get(r.task.node)
        meta = _metadata(run, spec.metadata if spec is not None else None)
        sink(StreamPart("updates", step, r.task.node, shown(r.writes), (), r.cached, meta))


def _stream_step(
    engine: Engine, run: Run, results: Sequence[TaskResult], streamed: frozenset[int]
) -> None:
    """A finished step's parts: its updates (but those `streamed` at its start), its values."""
    sink = run.sink
    assert sink is not None
    state = engine.state
    if streamed:
        _stream_updates(engine, run, run.step, [r for r in results if r.task.index not in streamed])
    else:
        _stream_updates(engine, run, run.step, results)
    if "values" in run.modes and any(state.shows(r.writes) for r in results):
        # as LangGraph does: a step that changed none of the state's fields shows nothing new
        sink(StreamPart("values", run.step, None, state.view(run.values)))


def stream_pause(run: Run, interrupts: Sequence[Interrupt]) -> None:
    """Tell the stream's reader that the run paused: at `interrupts`, or none at a breakpoint."""
    if run.sink is not None:
        run.sink(StreamPart("updates", run.step + 1, INTERRUPT, list(interrupts)))
