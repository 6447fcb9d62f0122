"""Where ToolNode runs a sync tool: in place, or on a worker thread (README: Prebuilt nodes).

The rule: a step's lone sync call runs on the caller's thread when the run is
the sync `invoke`'s and its step has one task (nothing to overlap, no other
run on that event loop) and the node has no timeout (a call in place cannot
be cut off). Everywhere else a sync tool runs on a worker thread: several
calls overlap, and under `ainvoke` a tool that blocks never holds up the
other runs on the loop.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from flowgraph import (
    END,
    START,
    AIMessage,
    HumanMessage,
    MessagesState,
    Send,
    StateGraph,
    ToolCall,
    ToolNode,
    tool,
    tools_condition,
)
from flowgraph.checkpoint.memory import MemoryCheckpointer


def react(tools: list[Any], calls: list[ToolCall], **node: Any) -> Any:
    """A model node that asks for `calls` once, then ends; the ToolNode answers them."""

    def model(state: MessagesState) -> dict[str, Any]:
        if len(state.messages) == 1:
            return {"messages": [AIMessage("", tool_calls=calls)]}
        return {"messages": [AIMessage("done")]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode(tools, **node))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=MemoryCheckpointer())


def threads_of(app: Any, run: Any) -> list[int]:
    seen: list[int] = []

    @tool
    def where(n: int) -> str:
        """Say which thread ran the call."""
        seen.append(threading.get_ident())
        return str(n)

    run(app(where))
    return seen


CALL = ToolCall(id="c1", name="where", args={"n": 1})


def test_a_lone_sync_call_under_invoke_runs_on_the_callers_thread() -> None:
    seen = threads_of(
        lambda where: react([where], [CALL]),
        lambda app: app.invoke({"messages": [HumanMessage("go")]}, thread_id="t"),
    )
    assert seen == [threading.get_ident()]


def test_with_a_timeout_the_lone_call_runs_on_a_worker_thread() -> None:
    seen = threads_of(
        lambda where: react([where], [CALL], timeout=5),
        lambda app: app.invoke({"messages": [HumanMessage("go")]}, thread_id="t"),
    )
    assert len(seen) == 1 and seen[0] != threading.get_ident()


def test_under_stream_the_lone_call_runs_on_a_worker_thread() -> None:
    """A sync stream hands parts over as they happen, so no sync work holds its thread."""
    seen = threads_of(
        lambda where: react([where], [CALL]),
        lambda app: list(app.stream({"messages": [HumanMessage("go")]}, thread_id="t")),
    )
    assert len(seen) == 1 and seen[0] != threading.get_ident()


def test_several_calls_under_invoke_overlap_on_worker_threads() -> None:
    barrier = threading.Barrier(3, timeout=5)
    seen: list[int] = []

    @tool
    def meet(n: int) -> str:
        """Wait until all three calls run at once."""
        barrier.wait()  # raises BrokenBarrierError unless the three overlap
        seen.append(threading.get_ident())
        return str(n)

    calls = [ToolCall(id=f"c{n}", name="meet", args={"n": n}) for n in range(3)]
    out = react([meet], calls).invoke({"messages": [HumanMessage("go")]}, thread_id="t")
    assert [m.text for m in out.messages[2:5]] == ["0", "1", "2"]
    assert len(set(seen)) == 3 and threading.get_ident() not in seen


def test_sends_to_a_tool_node_run_their_calls_on_worker_threads() -> None:
    """Each Send is a task of the same step: their calls overlap, none in place."""
    barrier = threading.Barrier(2, timeout=5)

    @tool
    def meet(n: int) -> str:
        """Wait until both calls run at once."""
        barrier.wait()
        return str(n)

    def fan_out(state: MessagesState) -> list[Send]:
        return [
            Send("tools", {"messages": [AIMessage("", tool_calls=[call])]})
            for call in state.messages[-1].tool_calls
        ]

    def model(state: MessagesState) -> dict[str, Any]:
        calls = [ToolCall(id=f"c{n}", name="meet", args={"n": n}) for n in range(2)]
        return {"messages": [AIMessage("", tool_calls=calls)]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode([meet]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", fan_out, ["tools"])
    graph.add_edge("tools", END)
    out = graph.compile().invoke({"messages": [HumanMessage("go")]})
    assert [m.text for m in out.messages[2:]] == ["0", "1"]


def test_under_ainvoke_a_blocking_tool_does_not_hold_up_other_runs() -> None:
    """Run A's tool blocks until run B, on the same event loop, sets an event.

    Were A's call run in place on the loop's thread, B could not start and A's
    wait would time out."""
    released = threading.Event()
    loop_threads: list[int] = []
    tool_threads: list[int] = []

    @tool
    def wait_for_b(n: int) -> str:
        """Block until the other run says so."""
        tool_threads.append(threading.get_ident())
        return "released" if released.wait(5) else "timed out"

    blocking = react([wait_for_b], [ToolCall(id="c1", name="wait_for_b", args={"n": 1})])

    async def release(state: MessagesState) -> dict[str, Any]:
        await asyncio.sleep(0.05)  # A's tool is blocking by now
        released.set()
        return {"messages": [AIMessage("set")]}

    graph = StateGraph(MessagesState)
    graph.add_node("release", release)
    graph.add_edge(START, "release")
    graph.add_edge("release", END)
    releaser = graph.compile()

    async def both() -> list[Any]:
        loop_threads.append(threading.get_ident())
        return await asyncio.gather(
            blocking.ainvoke({"messages": [HumanMessage("go")]}, thread_id="a"),
            releaser.ainvoke({"messages": [HumanMessage("go")]}),
        )

    first, _ = asyncio.run(both())
    assert first.messages[2].text == "released"
    assert tool_threads and tool_threads[0] != loop_threads[0]


def test_a_toolnode_of_sync_tools_is_stepped_without_a_task_under_invoke() -> None:
    """Only flowgraph's code awaits in it, so the sync `invoke` steps the run by hand
    (no asyncio Task, no loop turn); an async tool or a timeout needs a Task."""

    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        tasks.append(asyncio.current_task())
        return f"found {q}"

    @tool
    async def alookup(q: str) -> str:
        """Look something up, asynchronously."""
        return q

    tasks: list[Any] = []
    assert ToolNode([lookup]).runs_without_task
    assert not ToolNode([lookup, alookup]).runs_without_task
    assert not ToolNode([lookup], timeout=5).runs_without_task
    calls: list[ToolCall] = [{"id": "c1", "name": "lookup", "args": {"q": "x"}}]
    app = react([lookup], calls)
    assert app.engine.plan.all_sync
    assert not react([lookup], calls, timeout=5).engine.plan.all_sync
    out = app.invoke({"messages": [HumanMessage("go")]}, thread_id="t")
    assert [m.text for m in out.messages] == ["go", "", "found x", "done"]
    assert tasks == [None]


def test_a_sync_tool_that_returns_a_coroutine_gets_a_task_for_it() -> None:
    """Stepped without a Task, the ToolNode still runs such a coroutine inside one, so
    `asyncio.timeout` (which needs a Task) works in it."""

    async def timed(q: str) -> str:
        async with asyncio.timeout(5):
            await asyncio.sleep(0)
        return f"timed {q}"

    @tool
    def later(q: str) -> Any:
        """Answer through a coroutine."""
        return timed(q)

    app = react([later], [{"id": "c1", "name": "later", "args": {"q": "x"}}])
    assert app.engine.plan.all_sync
    out = app.invoke({"messages": [HumanMessage("go")]}, thread_id="t")
    assert out.messages[2].text == "timed x"
