"""The prebuilt path users take: `@tool`, `ToolNode`, `tools_condition`, `create_react_agent`.

The engine scenarios (`bench_graph`, `bench_checkpoint`) use hand-written
nodes on both sides, so they compare the engines. These put each library's
prebuilt pieces in the same places (`benchmarks/_prebuilt.py`), so they
compare what a user of either library gets:

- `prebuilt_react`: `_react.py`'s conversation (2 tool rounds a turn) with a
  scripted model node, `ToolNode([lookup])` and `tools_condition`; µs per
  superstep. Without a checkpointer, 20 turns carried in the input, a sync
  `@tool` under `invoke` and an async one (async model node) under
  `ainvoke`; with a checkpointer (in memory, SQLite file), 10 turns of one
  thread, each input only the new user message, sync `@tool`, `invoke`.
- `prebuilt_agent`: the same conversation through each library's
  `create_react_agent` over a scripted chat model; µs per superstep, without
  a checkpointer and on SQLite.
- `prebuilt_fanout`: a model node asks for 200 tool calls and a branch
  sends each to the ToolNode with its own `Send`; ms per run, sync `@tool`
  under `invoke`, async under `ainvoke`.
- `prebuilt_threads`: 300 conversations x 3 turns of one tool round, an
  async model node and the ToolNode, `ainvoke` with 50 runs in flight; runs
  per second, sync and async `@tool`.
- `prebuilt_cold_resume`: a fresh process imports the library, opens a copy
  of a 600-message `create_react_agent` thread on SQLite (150 turns of a
  question, a tool call, its result and the answer), builds the agent and
  calls `get_state`; ms (interpreter start-up not counted).

Each scenario first checks both libraries produced the same messages (kinds
and tool-call ids); timed blocks alternate between the sides and each keeps
its best block median, as in `bench_graph`.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from contextlib import closing
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks._harness import Figure, has_langgraph, scenario
from benchmarks._prebuilt import (
    ours_agent,
    ours_fanout_graph,
    ours_react_graph,
    theirs_agent,
    theirs_fanout_graph,
    theirs_react_graph,
)
from benchmarks._react import (
    ROUNDS,
    messages_per_turn,
    ours_turn_input,
    steps_per_turn,
    theirs_turn_input,
)
from benchmarks.bench_checkpoint import (
    STEP_TURNS,
    _ours_conversation,
    _remove_db,
    _theirs_conversation,
    _theirs_sqlite,
    cold_figures,
)
from benchmarks.bench_graph import (
    FANOUT,
    THREAD_ROUNDS,
    TURNS,
    _aconversation,
    _check_same_messages,
    _conversation,
    _ours_messages,
    _paired,
    _theirs_messages,
    threads_figure,
)

STEPS = TURNS * steps_per_turn(ROUNDS)
"""Supersteps of one 20-turn conversation without a checkpointer."""
THREAD_STEPS = STEP_TURNS * steps_per_turn(ROUNDS)
"""Supersteps of one checkpointed 10-turn thread."""
AGENT_TURNS = 150
"""Turns of the cold-resume thread: 4 messages each (question, call, result, answer)."""
AGENT_THREAD_ID = "agent-thread"
DATA_DIR = Path(tempfile.gettempdir()) / "flowgraph-bench-prebuilt"

REACT_TARGET = 12
SQLITE_TARGET = 15
FANOUT_TARGET = 12
THREADS_TARGET = 12
RESUME_TARGET = 5


def _us_per_step(seconds: float | None, steps: int) -> float | None:
    return None if seconds is None else seconds / steps * 1e6


# -- prebuilt_react ---------------------------------------------------------------


def _carried(
    library: str, make: Callable[..., Any], loop: asyncio.AbstractEventLoop | None
) -> Callable[[], list[Any]]:
    """A 20-turn conversation carried in the input: `invoke`, or `ainvoke` on `loop`."""
    if library == "ours":
        turn_input, messages_of = ours_turn_input, _ours_messages
    else:
        turn_input, messages_of = theirs_turn_input, _theirs_messages
    app = make()
    if loop is None:
        return _conversation(app, turn_input, messages_of)
    return _aconversation(loop, app, turn_input, messages_of)


def _carried_figure(
    name: str,
    ours_make: Callable[[], Any],
    theirs_make: Callable[[], Any],
    loop: asyncio.AbstractEventLoop | None,
    target: float | None,
) -> Figure:
    """Time a carried 20-turn conversation on both sides; µs per superstep."""
    expected = TURNS * messages_per_turn(ROUNDS)
    ours = _carried("ours", ours_make, loop)
    theirs = None
    if has_langgraph():
        theirs = _carried("theirs", theirs_make, loop)
        _check_same_messages(ours(), theirs(), expected)
    elif len(ours()) != expected:
        raise AssertionError(f"the ReAct loop should leave {expected} messages")
    ours_s, theirs_s = _paired(ours, theirs, repeat=10, blocks=3)
    return Figure(name, "µs", ours_s / STEPS * 1e6, _us_per_step(theirs_s, STEPS), target=target)


def _threaded_figure(
    name: str,
    ours_make: Callable[[Any], Any],
    theirs_make: Callable[[Any], Any],
    kind: str,
    target: float | None,
) -> Figure:
    """Time a checkpointed 10-turn thread on both sides (`kind`: memory or sqlite)."""
    from flowgraph.checkpoint import MemoryCheckpointer, SQLiteCheckpointer

    expected = STEP_TURNS * messages_per_turn(ROUNDS)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        contexts: list[Any] = []
        closers: list[Callable[[], None]] = []
        try:
            if kind == "memory":
                ours_saver: Any = MemoryCheckpointer()
            else:
                ours_saver = SQLiteCheckpointer(directory / "ours.sqlite")
                closers.append(ours_saver.close)
            ours = _ours_conversation(ours_make(ours_saver))
            theirs = None
            if has_langgraph():
                if kind == "memory":
                    from langgraph.checkpoint.memory import InMemorySaver

                    theirs_saver: Any = InMemorySaver()
                else:
                    context = _theirs_sqlite(directory / "theirs.sqlite")
                    contexts.append(context)
                    theirs_saver = context.__enter__()
                theirs = _theirs_conversation(theirs_make(theirs_saver))
                _check_same_messages(ours(), theirs(), expected)
            elif len(ours()) != expected:
                raise AssertionError(f"the ReAct thread should hold {expected} messages")
            ours_s, theirs_s = _paired(ours, theirs, repeat=5, blocks=3, warmup=1)
        finally:
            for close in closers:
                close()
            for context in contexts:
                context.__exit__(None, None, None)
    return Figure(
        name,
        "µs",
        ours_s / THREAD_STEPS * 1e6,
        _us_per_step(theirs_s, THREAD_STEPS),
        target=target,
    )


@scenario("prebuilt_react")
def prebuilt_react() -> list[Figure]:
    figures = [
        _carried_figure(
            "sync @tool, invoke",
            lambda: ours_react_graph(tool_async=False),
            lambda: theirs_react_graph(tool_async=False),
            None,
            REACT_TARGET,
        )
    ]
    with closing(asyncio.new_event_loop()) as loop:
        figures.append(
            _carried_figure(
                "async @tool, ainvoke",
                lambda: ours_react_graph(tool_async=True, model_async=True),
                lambda: theirs_react_graph(tool_async=True, model_async=True),
                loop,
                REACT_TARGET,
            )
        )
    for kind, label, target in (
        ("memory", "in-memory checkpointer", None),
        ("sqlite", "SQLite checkpointer", SQLITE_TARGET),
    ):
        figures.append(
            _threaded_figure(
                f"sync @tool, {label}",
                lambda saver: ours_react_graph(tool_async=False, checkpointer=saver),
                lambda saver: theirs_react_graph(tool_async=False, checkpointer=saver),
                kind,
                target,
            )
        )
    return figures


# -- prebuilt_agent ---------------------------------------------------------------


@scenario("prebuilt_agent")
def prebuilt_agent() -> list[Figure]:
    return [
        _carried_figure(
            "sync @tool, invoke",
            lambda: ours_agent(tool_async=False),
            lambda: theirs_agent(tool_async=False),
            None,
            None,
        ),
        _threaded_figure(
            "sync @tool, SQLite checkpointer",
            lambda saver: ours_agent(tool_async=False, checkpointer=saver),
            lambda saver: theirs_agent(tool_async=False, checkpointer=saver),
            "sqlite",
            None,
        ),
    ]


# -- prebuilt_fanout --------------------------------------------------------------


def _fanout_run(app: Any, loop: asyncio.AbstractEventLoop | None) -> Callable[[], Any]:
    if loop is None:
        return lambda: app.invoke({"messages": []})
    return lambda: loop.run_until_complete(app.ainvoke({"messages": []}))


def _check_fanout(result: Any, messages_of: Callable[[Any], list[Any]]) -> None:
    messages = messages_of(result)
    answered = [m.tool_call_id for m in messages[1:]]
    if answered != [f"call-{i}" for i in range(FANOUT)]:
        raise AssertionError(f"the fan-out should answer {FANOUT} calls in order: {answered[:5]}")


@scenario("prebuilt_fanout")
def prebuilt_fanout() -> list[Figure]:
    figures = []
    with closing(asyncio.new_event_loop()) as loop:
        for label, is_async in (("sync @tool, invoke", False), ("async @tool, ainvoke", True)):
            on = loop if is_async else None
            ours = _fanout_run(ours_fanout_graph(FANOUT, tool_async=is_async), on)
            _check_fanout(ours(), _ours_messages)
            theirs = None
            if has_langgraph():
                theirs = _fanout_run(theirs_fanout_graph(FANOUT, tool_async=is_async), on)
                _check_fanout(theirs(), _theirs_messages)
            ours_s, theirs_s = _paired(ours, theirs, repeat=8, blocks=3)
            figures.append(
                Figure(
                    f"{FANOUT} Sends, {label}",
                    "ms",
                    ours_s * 1e3,
                    None if theirs_s is None else theirs_s * 1e3,
                    target=FANOUT_TARGET,
                )
            )
    return figures


# -- prebuilt_threads -------------------------------------------------------------


@scenario("prebuilt_threads")
def prebuilt_threads() -> list[Figure]:
    with closing(asyncio.new_event_loop()) as loop:
        return [
            threads_figure(
                loop,
                label,
                ours_react_graph(tool_async=is_async, model_async=True, rounds=THREAD_ROUNDS),
                partial(
                    theirs_react_graph, tool_async=is_async, model_async=True, rounds=THREAD_ROUNDS
                ),
                THREADS_TARGET,
            )
            for label, is_async in (("sync @tool", False), ("async @tool", True))
        ]


# -- prebuilt_cold_resume ---------------------------------------------------------


def agent_turn(app: Any, library: str, turn: int) -> list[Any]:
    """One more question to the agent thread; its messages afterwards."""
    if library == "ours":
        from flowgraph import HumanMessage

        state = app.invoke(
            {"messages": [HumanMessage(f"question {turn}")]}, thread_id=AGENT_THREAD_ID
        )
        return state.messages  # type: ignore[no-any-return]
    from langchain_core.messages import HumanMessage as LCHumanMessage

    config = {"configurable": {"thread_id": AGENT_THREAD_ID}}
    result = app.invoke({"messages": [LCHumanMessage(f"question {turn}")]}, config)
    return result["messages"]  # type: ignore[no-any-return]


def _agent_db(library: str) -> Path:
    return DATA_DIR / f"agent_thread_{library}.sqlite"


def _write_agent_thread(library: str) -> None:
    """The 600-message thread, written once per machine (it takes a while on LangGraph's side)."""
    path = _agent_db(library)
    DATA_DIR.mkdir(exist_ok=True)
    partial = path.with_suffix(".partial")
    _remove_db(partial)
    if library == "ours":
        from flowgraph.checkpoint import SQLiteCheckpointer

        store = SQLiteCheckpointer(partial)
        try:
            app = ours_agent(tool_async=False, checkpointer=store, rounds=1)
            for turn in range(AGENT_TURNS):
                messages = agent_turn(app, library, turn)
        finally:
            store.close()
    else:
        with _theirs_sqlite(partial) as saver:
            app = theirs_agent(tool_async=False, checkpointer=saver, rounds=1)
            for turn in range(AGENT_TURNS):
                messages = agent_turn(app, library, turn)
    if len(messages) != 4 * AGENT_TURNS:
        raise AssertionError(f"the agent thread should hold {4 * AGENT_TURNS}: {len(messages)}")
    for suffix in ("-wal", "-shm"):
        Path(f"{partial}{suffix}").unlink(missing_ok=True)
    partial.replace(path)


@scenario("prebuilt_cold_resume")
def prebuilt_cold_resume() -> list[Figure]:
    libraries = ["ours", "theirs"] if has_langgraph() else ["ours"]
    for library in libraries:
        if not _agent_db(library).exists():
            _write_agent_thread(library)
    return cold_figures(
        {library: _agent_db(library) for library in libraries},
        kind="agent",
        messages=(4 * AGENT_TURNS, 4 * AGENT_TURNS + 4),
        name="import + open + get_state, 600 msgs",
        turn_target=None,
    )
