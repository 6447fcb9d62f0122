"""Preparing a run: new input, resume, fork or human answer, turned into a ready `Run`.

This is where a thread's history meets the caller's input: the checkpoint
to continue from is loaded, a new input is merged (and checkpointed) as
its own step, and a resume picks up the pending tasks, reusing the writes
of those that already finished.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from flowgraph._context import RunInfo, RunUsage, message_id_factory
from flowgraph._ids import deterministic_id_factory, random_scope_key
from flowgraph.errors import InvalidUpdateError
from flowgraph.graph._core.merge import apply_writes, step_scope
from flowgraph.graph._core.spec import Task, TaskResult
from flowgraph.graph._core.types import MISSING, START, Budget, Command, Send, StreamPart
from flowgraph.graph._engine.loop import _command_writes, start_tasks
from flowgraph.graph._engine.run import PASSED_UP, Engine, Run
from flowgraph.graph._engine.superstep import next_tasks
from flowgraph.messages import AIMessage, ToolMessage

if TYPE_CHECKING:
    from flowgraph.checkpoint.base import BaseCheckpointer
    from flowgraph.graph._core.schema import StateAdapter
    from flowgraph.graph._thread.opening import Opened
    from flowgraph.graph._thread.record import Loaded, PendingTask

__all__ = ["RunOptions", "prepare_run"]

CANCELLED_TOOL_CALL = (
    "Cancelled: the conversation moved on before this tool call ran, so it has no result."
)


@dataclass(slots=True, kw_only=True)
class RunOptions:
    """How the caller wants this one run done.

    Not frozen: one is built per call, and a frozen dataclass pays an
    `object.__setattr__` per field; derived options use `dataclasses.replace`.
    """

    thread_id: str | None = None
    checkpoint_id: str | None = None
    recursion_limit: int = 100
    budget: Budget | None = None
    inline_sync: bool = False
    sink: Callable[[StreamPart], None] | None = None
    modes: frozenset[str] = frozenset()
    subgraphs: bool = False
    passed_up: frozenset[str] = PASSED_UP
    interrupt_before: frozenset[str] = frozenset()
    interrupt_after: frozenset[str] = frozenset()
    stop: threading.Event | None = None
    """Set by the caller: start no further step (the thread stays resumable)."""
    closed: threading.Event | None = None
    """Set when a stream's reader stopped reading: start no further step."""
    wait: bool | float = False
    """Wait for this process's other runs on the thread instead of failing (seconds or True)."""
    run_id: str | None = None
    """The caller's name for this run, kept in its checkpoints' metadata (default: a fresh id)."""
    caught_up: Callable[[], Awaitable[None]] | None = None
    info: RunInfo | None = None
    """What nodes asking for `config` or `runtime` read (None: nothing was given)."""
    rerun_tool_calls: bool = False
    """A branch runs its tool calls again even when another branch stored their results."""


def _usage_for(budget: Budget | None) -> RunUsage:
    if budget is None:
        return RunUsage()
    return RunUsage(
        max_model_calls=budget.max_model_calls,
        max_tool_calls=budget.max_tool_calls,
        max_tokens=budget.max_tokens,
    )


def _input_writes(engine: Engine, input: Any) -> dict[str, Any]:
    if type(input) is dict:  # the usual input, answered without an ABC instance check
        return dict(input)
    if isinstance(input, BaseModel):
        return {k: getattr(input, k) for k in input.model_fields_set}
    if engine.state.is_dataclass and isinstance(input, engine.state.schema):
        return {k: getattr(input, k) for k in engine.state.reducers if hasattr(input, k)}
    if isinstance(input, Mapping):
        return dict(input)
    if isinstance(input, Command):
        raise InvalidUpdateError(
            "invoke() was given an empty Command: give it resume=... (the answer to an "
            "interrupt), update=... (state fields to write) or goto=... (the node(s) to run)",
            node=START,
        )
    raise InvalidUpdateError(
        f"invoke() takes a dict of state fields (or a {engine.state.schema.__name__}), None to "
        "resume, or a Command (resume=..., update=..., goto=...); not "
        f"{type(input).__name__}",
        node=START,
    )


def _unanswered_tool_calls(engine: Engine, values: dict[str, Any]) -> dict[str, list[Any]]:
    """Error ToolMessages for tool calls a new input would otherwise leave unanswered.

    Providers reject a history where an AI message's tool calls are not
    followed by a result for each; a thread paused or crashed between the
    two would be stuck. The calls get `status="error"` results saying they
    were cancelled, placed right after their AI message.
    """
    patches: dict[str, list[Any]] = {}
    for key in engine.state.message_fields:
        messages = values.get(key) or []
        answered = set()
        for message in reversed(messages):
            if isinstance(message, ToolMessage):
                answered.add(message.tool_call_id)
                continue
            if isinstance(message, AIMessage):
                missing = [c for c in message.tool_calls if c.id not in answered]
                if missing:
                    patches[key] = [
                        ToolMessage(
                            content=CANCELLED_TOOL_CALL,
                            tool_call_id=c.id,
                            name=c.name,
                            status="error",
                        )
                        for c in missing
                    ]
            break
    return patches


async def prepare_run(
    engine: Engine,
    checkpointer: BaseCheckpointer | None,
    input: Any,
    options: RunOptions,
    opened: Opened | None = None,
) -> Run:
    """A run ready for the loop: state loaded or fresh, input applied, first tasks planned.

    `opened`: the run's thread as `_thread.opening` opened it (lease, checkpoint,
    writer); None for a run without a thread.
    """
    state = engine.state
    run = Run(
        values=state.defaults(),
        tasks=[],
        scope=random_scope_key(),
        usage=_usage_for(options.budget),
        recursion_limit=options.recursion_limit,
        sink=options.sink,
        modes=options.modes,
        subgraphs=options.subgraphs,
        passed_up=options.passed_up,
        inline_sync=options.inline_sync,
        interrupt_before=options.interrupt_before,
        interrupt_after=options.interrupt_after,
        stop=options.stop,
        closed=options.closed,
        caught_up=options.caught_up,
    )
    command = input if isinstance(input, Command) else None
    resuming = input is None or (command is not None and command.has_resume)
    if command is not None and command.update is None and not command.goto:
        command = None  # a plain resume (or an empty Command, refused below)
    if opened is None:
        if checkpointer is not None:
            raise InvalidUpdateError(
                "This graph keeps checkpoints: pass thread_id=... (any string naming the "
                "conversation) to invoke() or stream()",
                node=START,
            )
        if resuming:
            raise InvalidUpdateError(
                "Resuming (invoke(None) or Command(resume=...)) needs a checkpointer and a "
                "thread_id; compile(checkpointer=...) to keep a thread's history",
                node=START,
            )
        if command is not None:
            await _apply_command(engine, run, command, None)
        else:
            await _apply_input(engine, run, input, step=0)
        return run
    assert options.thread_id is not None
    loaded, forking = opened.loaded, opened.forking
    if loaded is not None:
        run.values = loaded.values
        run.step = loaded.record.step
        run.join_seen = loaded.joins
    if opened.redelivered:
        input, command, resuming = None, None, True
    run.saver, run.reuse, run.scope = opened.saver, opened.reuse, opened.scope
    if command is not None:
        # a routed input: its update is a step of its own, its goto the next tasks (with
        # whatever the thread still had to do), then the thread goes on as a resume does
        if loaded is not None:
            _resume(run, loaded, command if command.has_resume else None, forking)
            run.skip_breakpoint = bool(loaded.tasks)
        elif command.has_resume:
            raise _nothing_to_resume(options.thread_id)
        await _apply_command(engine, run, command, loaded)
        return run
    if resuming:
        if loaded is None:
            raise _nothing_to_resume(options.thread_id)
        _resume(run, loaded, input, forking)
        if run.sink is not None and "values" in run.modes:
            # as LangGraph does: a resumed run first shows the state it goes on from
            run.sink(StreamPart("values", run.step, None, state.view(run.values)))
        return run
    patches = _unanswered_tool_calls(engine, run.values) if loaded is not None else {}
    await _apply_input(engine, run, input, step=run.step + 1 if loaded else 0, patches=patches)
    return run


def _nothing_to_resume(thread_id: str) -> InvalidUpdateError:
    return InvalidUpdateError(
        f"Thread {thread_id!r} has no checkpoint to resume; start it with an input dict",
        node=START,
    )


def _resume(run: Run, loaded: Loaded, input: Command | None, forking: bool = False) -> None:
    """Continue the checkpoint's pending tasks, reusing finished ones and answering pauses.

    A fork with an answer (`Command(resume=...)` at a past checkpoint whose
    interrupt was answered since) answers the interrupts its tasks are about to
    raise again: "what if they had said no?" (see `_fork_answers`).
    """
    run.tasks = list(loaded.tasks)
    tasks = {t.index: t for t in run.tasks}
    pending = {i: p for i, p in loaded.pending.items() if i in tasks}
    run.prefilled = {
        i: TaskResult(tasks[i], list(p.writes), list(p.goto), cached=True)
        for i, p in pending.items()
        if p.writes is not None
    }
    # Resuming is the caller's word to go on: a pause before these nodes is not taken
    # again (also when update_state wrote a new checkpoint in between).
    run.skip_breakpoint = True
    paused = {i: p for i, p in pending.items() if p.pauses}
    run.paused = paused
    run.carried = {i: p for i, p in pending.items() if p.writes is None}
    run.answers = {i: dict(p.answers) for i, p in paused.items()}
    if input is None:
        return
    if not paused and forking and run.tasks:
        run.answers = _fork_answers(run, loaded, input.resume)
        return
    if not paused:
        raise InvalidUpdateError(
            f"Thread {loaded.record.thread_id!r} is not waiting at an interrupt(); "
            "resume it with invoke(None) or send a new input",
            node=START,
        )
    answers = _answers(paused, input.resume)
    for i, p in paused.items():
        for pause in p.pauses:
            if pause.interrupt.id in answers:
                run.answers[i][pause.key] = answers[pause.interrupt.id]


def _answers(paused: dict[int, PendingTask], resume: Any) -> dict[str, Any]:
    ids = [pause.interrupt.id for p in paused.values() for pause in p.pauses]
    if isinstance(resume, Mapping) and resume and set(resume) <= set(ids):
        return dict(resume)
    if len(ids) == 1:
        return {ids[0]: resume}
    raise InvalidUpdateError(
        f"{len(ids)} interrupts are waiting ({', '.join(ids)}); resume them with "
        "Command(resume={interrupt_id: value, ...})",
        node=START,
    )


def _fork_answers(run: Run, loaded: Loaded, resume: Any) -> dict[int, dict[str, Any]]:
    """A fork's answers to the interrupts its first step's tasks will raise, by task and key.

    Interrupt ids depend only on the checkpoint, the task and the position of
    the call in it, so the ids the origin showed at this checkpoint are the ids
    the fork's tasks raise: `{interrupt_id: value}` answers them by id, a plain
    value the first interrupt of the step's only task.
    """
    record = loaded.record
    prefix = f"{step_scope(record.thread_id, record.checkpoint_id)}-{record.step + 1}-"
    indexes = {t.index for t in run.tasks}
    if isinstance(resume, Mapping) and resume:
        places = {key: _place(prefix, key, indexes) for key in resume}
        if None not in places.values():  # keyed by interrupt ids, not an answer that is a dict
            answers: dict[int, dict[str, Any]] = {}
            for key, value in resume.items():
                task, position = places[key]  # type: ignore[misc]  # None was ruled out
                answers.setdefault(task, {})[position] = value
            return answers
    if len(run.tasks) == 1:
        return {run.tasks[0].index: {"i0": resume}}
    first = [f"{prefix}{t.index}-i0" for t in run.tasks]
    raise InvalidUpdateError(
        f"Checkpoint {record.checkpoint_id!r} of thread {record.thread_id!r} runs "
        f"{len(first)} tasks next; say which interrupt the answer is for with "
        f"Command(resume={{interrupt_id: value, ...}}), e.g. {', '.join(first)}",
        node=START,
    )


def _place(prefix: str, interrupt_id: Any, indexes: set[int]) -> tuple[int, str] | None:
    """(task index, key in the task) of an interrupt id of the fork's first step, or None."""
    if not isinstance(interrupt_id, str) or not interrupt_id.startswith(prefix):
        return None
    task, _, position = interrupt_id[len(prefix) :].partition("-")
    if not (task.isdigit() and int(task) in indexes and position[:1] == "i"):
        return None
    return (int(task), position) if position[1:].isdigit() else None


async def _apply_input(
    engine: Engine,
    run: Run,
    input: Any,
    *,
    step: int,
    patches: dict[str, list[Any]] | None = None,
) -> None:
    """Merge the input as the step before the first node runs (checkpointed as 'input')."""
    state = engine.state
    writes = _input_writes(engine, input)
    token = message_id_factory.set(deterministic_id_factory(run.scope, step, 0))
    try:
        checked = given = state.check_update(START, writes, positions=True)
        if patches:  # a thread's history with unanswered tool calls: their results go first
            checked = {}
            for key, extra in patches.items():
                answered = {
                    m.tool_call_id for m in given.get(key, ()) if isinstance(m, ToolMessage)
                }
                missing = [m for m in extra if m.tool_call_id not in answered]
                if missing:
                    checked[key] = state.check_update(START, {key: missing})[key]
            for key, value in given.items():
                checked[key] = [*checked[key], *value] if key in checked else value
    finally:
        message_id_factory.reset(token)
    result = TaskResult(Task(START), list(checked.items()))
    _merge_input(state, run, result, step, "The input", "pass them to invoke()")
    await start_tasks(engine, run, START)
    run.step = step
    if run.saver is not None:
        await run.saver.save_step(
            run.values, [result], run.tasks, run.join_seen, run.usage, step, source="input"
        )
    if run.sink is not None and "values" in run.modes and state.shows(result.writes):
        run.sink(StreamPart("values", step, None, state.view(run.values)))


def _merge_input(
    state: StateAdapter, run: Run, result: TaskResult, step: int, what: str, fix: str
) -> None:
    """Merge an input step's writes into the run's values; no required field may stay unset."""
    run.values = apply_writes(state, run.values, [result], scope=run.scope, step=step)
    missing = state.missing_required(run.values)
    if missing:
        raise InvalidUpdateError(
            f"{what} leaves required field(s) {', '.join(missing)} of "
            f"{state.schema.__name__} unset; {fix} or give them defaults",
            node=START,
            key=missing[0],
        )


async def _apply_command(engine: Engine, run: Run, command: Command, loaded: Loaded | None) -> None:
    """A Command input's update as the run's input step; its goto targets join the tasks.

    `run.tasks` holds the thread's pending tasks (`_resume` ran first, so a
    bad resume value fails before anything is stored).

    As LangGraph runs `Command(update=..., goto=...)`: the update is merged
    through the reducers (and checkpointed as the "input" step), and the
    next step runs the thread's pending tasks (a pause, a stop) plus each
    goto target (a node name or a Send); START's edges are not taken.
    """
    state = engine.state
    step = run.step + 1 if loaded is not None else 0
    update = command.update
    if update is not None and not isinstance(update, (Mapping, list, tuple)):
        raise InvalidUpdateError(
            f"Command(update=...) given to invoke() is a {type(update).__name__}; it must be "
            "a dict of state fields or a list of (field, value) pairs",
            node=START,
        )
    token = message_id_factory.set(deterministic_id_factory(run.scope, step, 0))
    try:
        writes = [] if update is None else _command_writes(engine, START, update)
    finally:
        message_id_factory.reset(token)
    result = TaskResult(Task(START), writes)
    _merge_input(state, run, result, step, "The Command's update", "pass them in update=...")
    pending = run.tasks  # what the thread still had to do (see _resume)
    waiting = {t.node for t in pending if t.arg is MISSING}
    targets = [t for t in command.goto_targets() if isinstance(t, Send) or t not in waiting]
    routed = next_tasks(engine.plan, [(START, targets)], run.join_seen) if targets else []
    base = max((t.index for t in pending), default=-1) + 1
    for offset, task in enumerate(routed):
        task.index = base + offset
    run.tasks = pending + routed
    run.step = step
    if run.saver is not None:
        await run.saver.save_step(
            run.values,
            [result],
            run.tasks,
            run.join_seen,
            run.usage,
            step,
            source="input",
            command=True,
        )
        if loaded is not None and loaded.pending:
            # a paused or stopped step carries over: its pauses and finished tasks stay
            await run.saver.save_pending(loaded.pending)
    if run.sink is not None and "values" in run.modes:
        run.sink(StreamPart("values", step, None, state.view(run.values)))
