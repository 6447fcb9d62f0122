"""One way through a run (issue #29): following a thread from `invoke` to the run loop.

The calls a run makes before the loop starts are traced (sys.setprofile)
and named by the room of the graph package their code is in (the facade,
`_engine`, `_thread`; `_core` is the shared vocabulary every room calls and
is left out). The facade hands the call to the engine, which opens the thread
(lease, checkpoint, the run's writer) in one call and sets the run up; an
input's step is written through the thread's writer; the run loop starts. So
a run goes back into a room it left at most twice, whichever way it comes in:
a first or a new input (its write taking the lease where the store can), a
resume, an answer to an interrupt, a fork.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import flowgraph.graph._engine.loop as loop
from flowgraph import END, START, Command, HumanMessage, MessagesState, StateGraph, interrupt
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

GRAPH = Path(loop.__file__).resolve().parents[1]
_SUSPENDS = inspect.CO_COROUTINE | inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR


def room(filename: str) -> str | None:
    try:
        parts = Path(filename).resolve().relative_to(GRAPH).parts
    except ValueError:
        return None  # outside flowgraph.graph: the store, pydantic, asyncio ...
    if parts[0] == "_core":
        return None
    return parts[0] if parts[0].startswith("_") and len(parts) > 1 else "facade"


def entered_rooms(run: Any, *, until_loop: bool = True) -> list[str]:
    """The rooms the calls of `run()` enter, in order (until the run loop starts)."""
    entered: list[str] = []
    done = False
    frames: list[FrameType] = []  # kept alive, so that no new frame reuses a seen one's id
    started: set[int] = set()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal done
        if done or event != "call":
            return
        if frame.f_code.co_flags & _SUSPENDS:
            if id(frame) in started:
                return  # a coroutine resumed after an await: not a new call
            started.add(id(frame))
            frames.append(frame)
        code = frame.f_code
        if until_loop and code.co_name == "run_loop" and code.co_filename == loop.__file__:
            done = True
            return
        where = room(code.co_filename)
        if where is not None and (not entered or entered[-1] != where):
            entered.append(where)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    assert done or not until_loop, "the run loop never started"
    return entered


def returns(entered: list[str]) -> int:
    """How many times the path goes back into a room it had left."""
    seen: set[str] = set()
    back = 0
    for where in entered:
        back += where in seen
        seen.add(where)
    return back


def _app(checkpointer: Any) -> Any:
    def answer(state: MessagesState) -> dict[str, Any]:
        if state.messages[-1].text == "ask":
            return {"messages": [("ai", f"told {interrupt('which?')}")]}
        return {"messages": [("ai", "ok")]}

    g = StateGraph(MessagesState)
    g.add_node("answer", answer)
    g.add_edge(START, "answer")
    g.add_edge("answer", END)
    return g.compile(checkpointer=checkpointer)


def _call(app: Any, path: str) -> Any:
    """The call of `path` on thread "t" (which has had one turn), after what it needs."""
    if path == "first input":
        return lambda: app.invoke({"messages": [HumanMessage("hi")]}, thread_id="new")
    if path == "new input":
        return lambda: app.invoke({"messages": [HumanMessage("again")]}, thread_id="t")
    if path == "new input (async)":
        return lambda: asyncio.run(app.ainvoke({"messages": [HumanMessage("as")]}, thread_id="t"))
    if path == "resume":
        return lambda: app.invoke(None, thread_id="t")
    if path == "answer":
        app.invoke({"messages": [HumanMessage("ask")]}, thread_id="t")
        return lambda: app.invoke(Command(resume="this"), thread_id="t")
    assert path == "fork"
    first = list(app.get_state_history("t"))[-1].checkpoint_id
    return lambda: app.invoke({"messages": [HumanMessage("b")]}, thread_id="t", checkpoint_id=first)


PATHS = ["first input", "new input", "new input (async)", "resume", "answer", "fork"]


@pytest.mark.parametrize("store", ["sqlite", "memory"])
@pytest.mark.parametrize("path", PATHS)
def test_a_run_goes_back_into_a_room_at_most_twice(tmp_path: Path, store: str, path: str) -> None:
    """sqlite's input write takes the lease with it (one write); memory's run claims first."""
    if store == "sqlite":
        checkpointer: Any = SQLiteCheckpointer(tmp_path / "t.db")
    else:
        checkpointer = MemoryCheckpointer()
    app = _app(checkpointer)
    app.invoke({"messages": [HumanMessage("hi")]}, thread_id="t")
    run = _call(app, path)

    entered = entered_rooms(run)

    assert entered[:3] == ["facade", "_engine", "_thread"], " -> ".join(entered)
    assert returns(entered) <= 2, " -> ".join(entered)
    thread = "new" if path == "first input" else "t"
    assert app.get_state(thread).values.messages[-1].type == "ai"


def test_the_count_of_returns_sees_each_one() -> None:
    assert returns(["facade", "_engine", "_thread", "_engine", "_thread"]) == 2
    assert returns(["facade", "_engine", "_thread", "_engine", "_thread", "_engine"]) == 3


def test_the_trace_sees_a_room_entered_again() -> None:
    def back_and_forth() -> None:
        from flowgraph.graph._engine import bridge
        from flowgraph.graph._thread import record

        for _ in range(3):
            record.decode_pending_writes([])
            bridge.run_sync(_noop())

    async def _noop() -> None:
        return None

    entered = entered_rooms(back_and_forth, until_loop=False)

    assert Counter(entered)["_thread"] == 3 and Counter(entered)["_engine"] == 3
