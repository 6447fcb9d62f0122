"""wait=: runs of one process take turns on a thread instead of failing."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from flowgraph import END, START, AIMessage, MessagesState, StateGraph
from flowgraph.checkpoint.memory import MemoryCheckpointer
from flowgraph.errors import ConcurrentRunError


def slow_graph(gate: threading.Event, entered: threading.Event) -> Any:
    def reply(state: MessagesState) -> dict[str, Any]:
        entered.set()
        assert gate.wait(10)
        return {"messages": [AIMessage(f"reply to {state.messages[-1].text}")]}

    g = StateGraph(MessagesState)
    g.add_node("reply", reply)
    g.add_edge(START, "reply").add_edge("reply", END)
    return g.compile(checkpointer=MemoryCheckpointer())


def test_without_wait_the_second_run_fails_naming_the_thread() -> None:
    gate, entered = threading.Event(), threading.Event()
    app = slow_graph(gate, entered)
    first = threading.Thread(
        target=lambda: app.invoke({"messages": [("user", "one")]}, thread_id="t")
    )
    first.start()
    assert entered.wait(10)
    with pytest.raises(ConcurrentRunError) as info:
        app.invoke({"messages": [("user", "two")]}, thread_id="t")
    gate.set()
    first.join()
    assert info.value.thread_id == "t"
    assert [m.text for m in app.get_state("t").values.messages] == ["one", "reply to one"]


def test_with_wait_the_second_run_continues_after_the_first() -> None:
    gate, entered = threading.Event(), threading.Event()
    app = slow_graph(gate, entered)
    first = threading.Thread(
        target=lambda: app.invoke({"messages": [("user", "one")]}, thread_id="t")
    )
    first.start()
    assert entered.wait(10)
    threading.Timer(0.1, gate.set).start()
    final = app.invoke({"messages": [("user", "two")]}, thread_id="t", wait=True)
    first.join()
    assert [m.text for m in final.messages] == ["one", "reply to one", "two", "reply to two"]
    history = list(app.get_state_history("t"))
    # one linear chain: each input step stands after the checkpoint before its input
    assert [(h.step, h.next) for h in history] == [
        (3, ()), (2, ("reply",)), (1, (START,)), (1, ()), (0, ("reply",)), (-1, (START,))
    ]  # fmt: skip
    assert [h.parent_id for h in history] == [h.checkpoint_id for h in history[1:]] + [None]


def test_a_wait_that_times_out_is_a_concurrent_run_error() -> None:
    gate, entered = threading.Event(), threading.Event()
    app = slow_graph(gate, entered)
    first = threading.Thread(
        target=lambda: app.invoke({"messages": [("user", "one")]}, thread_id="t", wait=True)
    )
    first.start()
    assert entered.wait(10)
    with pytest.raises(ConcurrentRunError, match=r"after waiting 0\.05 s"):
        app.invoke({"messages": [("user", "two")]}, thread_id="t", wait=0.05)
    gate.set()
    first.join()


def test_async_runs_take_turns() -> None:
    gate, entered = threading.Event(), threading.Event()
    gate.set()
    app = slow_graph(gate, entered)

    async def main() -> list[str]:
        await asyncio.gather(
            *(
                app.ainvoke({"messages": [("user", f"q{i}")]}, thread_id="t", wait=True)
                for i in range(5)
            )
        )
        return [m.text for m in app.get_state("t").values.messages]

    texts = asyncio.run(main())
    assert len(texts) == 10
    assert sorted(texts[0::2]) == [f"q{i}" for i in range(5)]
    assert all(texts[i + 1] == f"reply to {texts[i]}" for i in range(0, 10, 2))
