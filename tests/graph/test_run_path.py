"""One way through a run (issue #29): following a thread from `invoke` to the run loop.

The calls a resume makes before the loop starts are traced (sys.setprofile)
and named by the room of the graph package their code is in (the facade,
`_engine`, `_thread`; `_core` is the shared vocabulary every room calls and
is left out). A room may be entered again at most twice: the facade hands
the call to the engine, which opens the thread (lease, then checkpoint) and
sets the run up.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import flowgraph.graph._engine.loop as loop
from flowgraph import END, START, HumanMessage, MessagesState, StateGraph
from flowgraph.checkpoint.sqlite import SQLiteCheckpointer

GRAPH = Path(loop.__file__).resolve().parents[1]


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

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal done
        if done or event != "call":
            return
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


def test_a_resume_enters_each_room_at_most_three_times(tmp_path: Path) -> None:
    g = StateGraph(MessagesState)
    g.add_node("answer", lambda state: {"messages": [("ai", "ok")]})
    g.add_edge(START, "answer")
    g.add_edge("answer", END)
    app = g.compile(checkpointer=SQLiteCheckpointer(tmp_path / "t.db"))
    app.invoke({"messages": [HumanMessage("hi")]}, thread_id="t")

    entered = entered_rooms(lambda: app.invoke(None, thread_id="t"))

    assert entered[:3] == ["facade", "_engine", "_thread"]
    assert max(Counter(entered).values()) <= 3, " -> ".join(entered)


def test_the_trace_sees_a_room_entered_again() -> None:
    def back_and_forth() -> None:
        from flowgraph.graph._engine import bridge
        from flowgraph.graph._thread import record

        for _ in range(3):
            record.step_scope("t", None)
            bridge.run_sync(_noop())

    async def _noop() -> None:
        return None

    entered = entered_rooms(back_and_forth, until_loop=False)

    assert Counter(entered)["_thread"] == 3 and Counter(entered)["_engine"] == 3
