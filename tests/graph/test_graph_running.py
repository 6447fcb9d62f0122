"""invoke/ainvoke: node kinds, the sync bridge inside a running loop, errors, concurrency."""

from __future__ import annotations

import asyncio
import functools
import gc
import operator
import subprocess
import sys
import textwrap
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any

import anyio
import pytest
from pydantic import Field

from flowgraph import END, START, AIMessage, HumanMessage, MessagesState, StateGraph

try:  # the public path of DESIGN §6, once the package re-exports it
    from flowgraph.checkpoint import MemoryCheckpointer  # type: ignore[attr-defined]
except ImportError:
    from flowgraph.checkpoint.memory import MemoryCheckpointer

TIMEOUT = 5.0


class State(MessagesState):
    trail: Annotated[list[str], operator.add] = Field(default_factory=list)
    count: int = 0


def single(fn: Any, name: str = "node") -> Any:
    g = StateGraph(State)
    g.add_node(name, fn)
    g.add_edge(START, name).add_edge(name, END)
    return g.compile()


# ------------------------------------------------------------------ node kinds


async def async_node(state: State) -> dict[str, Any]:
    await asyncio.sleep(0)
    return {"count": state.count + 1, "trail": ["async"]}


class AsyncCallable:
    def __init__(self, step: int) -> None:
        self.step = step

    async def __call__(self, state: State) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"count": state.count + self.step}


class SyncCallable:
    def __call__(self, state: State) -> dict[str, Any]:
        return {"count": state.count * 10}


async def add(state: State, amount: int) -> dict[str, Any]:
    return {"count": state.count + amount}


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (async_node, 2),
        (AsyncCallable(5), 6),
        (SyncCallable(), 10),
        (lambda s: add(s, 3), 4),  # a sync function returning a coroutine
        (functools.partial(add, amount=7), 8),
    ],
    ids=["async-def", "async-__call__", "sync-__call__", "returns-coroutine", "partial"],
)
def test_node_kinds(fn: Any, expected: int) -> None:
    app = single(fn)
    assert app.invoke({"count": 1}).count == expected
    assert asyncio.run(app.ainvoke({"count": 1})).count == expected


def test_instance_node_is_named_after_its_class() -> None:
    g = StateGraph(State)
    g.add_node(AsyncCallable(1))
    g.add_edge(START, "AsyncCallable").add_edge("AsyncCallable", END)
    assert g.compile().invoke({}).count == 1


def test_async_branch_and_async_nodes_in_a_loop() -> None:
    async def route(state: State) -> str:
        await asyncio.sleep(0)
        return "again" if state.count < 3 else END

    g = StateGraph(State)
    g.add_node("again", async_node)
    g.add_edge(START, "again")
    g.add_conditional_edges("again", route, ["again", END])
    out = asyncio.run(g.compile().ainvoke({}))
    assert out.count == 3
    assert out.trail == ["async"] * 3


async def needs_a_task(state: State) -> dict[str, Any]:
    """Async code that only works inside an asyncio Task, as library code often is."""
    assert asyncio.current_task() is not None
    async with asyncio.timeout(TIMEOUT):
        await asyncio.sleep(0)
    with anyio.fail_after(TIMEOUT):
        await anyio.sleep(0)
    return {"count": state.count + 1, "trail": ["timed"]}


class NeedsATask:
    async def __call__(self, state: State) -> dict[str, Any]:
        return await needs_a_task(state)


async def route_in_a_task(state: State) -> str:
    await needs_a_task(state)
    return "done"


@pytest.mark.parametrize(
    "fn",
    [needs_a_task, NeedsATask(), functools.partial(needs_a_task), lambda s: needs_a_task(s)],
    ids=["async-def", "async-__call__", "partial", "returns-coroutine"],
)
@pytest.mark.parametrize(
    "branch",
    [route_in_a_task, lambda s: route_in_a_task(s), lambda s: "done"],
    ids=["async-branch", "branch-returns-coroutine", "sync-branch"],
)
def test_sync_invoke_runs_async_nodes_and_branches_inside_a_task(fn: Any, branch: Any) -> None:
    """A sync step first (run inline), then async code that needs a current Task:
    invoke runs it as ainvoke does."""
    g = StateGraph(State)
    g.add_node("prep", lambda s: {"trail": ["prep"]})
    g.add_node("timed", fn)
    g.add_node("done", lambda s: {"trail": ["done"]})
    g.add_edge(START, "prep").add_edge("prep", "timed")
    g.add_conditional_edges("timed", branch, ["done"])
    g.add_edge("done", END)
    app = g.compile()
    out = app.invoke({"count": 1})
    assert (out.count, out.trail) == (2, ["prep", "timed", "done"])
    assert asyncio.run(app.ainvoke({"count": 1})) == out


# ------------------------------------------------------------------ sync API in a running loop


def chat_app() -> Any:
    def reply(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(f"echo: {state.messages[-1].text}")]}

    g = StateGraph(State)
    g.add_node("reply", reply)
    g.add_node("count", async_node)
    g.add_edge(START, "reply").add_edge("reply", "count").add_edge("count", END)
    return g.compile()


def test_invoke_inside_a_running_event_loop() -> None:
    app = chat_app()

    async def notebook_cell() -> Any:
        return app.invoke({"messages": [HumanMessage("hi")]})

    out = asyncio.run(notebook_cell())
    assert [m.text for m in out.messages] == ["hi", "echo: hi"]
    assert out.count == 1


def test_stream_inside_a_running_event_loop() -> None:
    app = chat_app()

    async def notebook_cell() -> list[tuple[str | None, int]]:
        return [(p.node, p.step) for p in app.stream({"messages": ["hi"]}, mode="updates")]

    assert asyncio.run(notebook_cell()) == [("reply", 1), ("count", 2)]


def test_invoke_repeatedly_from_plain_code() -> None:
    app = chat_app()
    for i in range(5):
        assert app.invoke({"messages": [f"m{i}"]}).messages[-1].text == f"echo: m{i}"


def test_invoke_from_worker_threads_leaves_no_unclosed_loop() -> None:
    app = chat_app()
    unraisable: list[str] = []
    previous = sys.unraisablehook
    sys.unraisablehook = lambda u: unraisable.append(repr(u.exc_value))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with ThreadPoolExecutor(4) as pool:
                outs = list(pool.map(lambda i: app.invoke({"messages": [f"t{i}"]}), range(12)))
            gc.collect()
    finally:
        sys.unraisablehook = previous
    assert [o.messages[-1].text for o in outs] == [f"echo: t{i}" for i in range(12)]
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaks + unraisable == []


NESTED_INVOKE = textwrap.dedent(
    """
    import asyncio, os, sys, threading
    from flowgraph import END, START, AIMessage, MessagesState, StateGraph

    inner = StateGraph(MessagesState)
    inner.add_node("m", lambda s: {"messages": [AIMessage("inner")]})
    inner.add_edge(START, "m").add_edge("m", END)
    inner = inner.compile()

    outer = StateGraph(MessagesState)
    outer.add_node("o", lambda s: {"messages": inner.invoke({}).messages})
    outer.add_edge(START, "o").add_edge("o", END)
    outer = outer.compile()

    async def cell():
        return outer.invoke({})

    result = []
    worker = threading.Thread(target=lambda: result.append(asyncio.run(cell())), daemon=True)
    worker.start()
    worker.join(float(sys.argv[1]))
    print([m.text for m in result[0].messages] if result else "DEADLOCK", flush=True)
    os._exit(0)
    """
)


def test_sync_node_calling_invoke_inside_a_running_loop() -> None:
    # In a subprocess: a deadlocked bridge loop would hang every later test of this worker.
    done = subprocess.run(
        [sys.executable, "-c", NESTED_INVOKE, "3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "['inner']", done.stdout + done.stderr


def test_sync_node_calling_invoke_from_plain_code() -> None:
    inner = single(lambda s: {"messages": [AIMessage("inner")]})
    outer = single(lambda s: {"messages": inner.invoke({}).messages})
    assert [m.text for m in outer.invoke({}).messages] == ["inner"]


# ------------------------------------------------------------------ errors name the node


class Boom(Exception):
    pass


def test_node_exception_keeps_its_type_and_names_node_and_step() -> None:
    def broken(state: State) -> None:
        raise Boom("no luck")

    g = StateGraph(State)
    g.add_node("first", lambda s: {"count": 1})
    g.add_node("broken", broken)
    g.add_edge(START, "first").add_edge("first", "broken").add_edge("broken", END)
    with pytest.raises(Boom, match="no luck") as info:
        g.compile().invoke({})
    notes = " ".join(info.value.__notes__)
    assert "'broken'" in notes
    assert "step 2" in notes


def test_async_node_exception_names_the_node() -> None:
    async def broken(state: State) -> None:
        await asyncio.sleep(0)
        raise LookupError("gone")

    with pytest.raises(LookupError) as info:
        asyncio.run(single(broken, "fetch").ainvoke({}))
    assert any("'fetch'" in note and "step 1" in note for note in info.value.__notes__)


def test_failing_node_among_siblings_names_the_failing_one() -> None:
    finished: list[str] = []

    def ok(state: State) -> dict[str, Any]:
        finished.append("ok")
        return {"trail": ["ok"]}

    def broken(state: State) -> None:
        raise Boom("sibling failed")

    g = StateGraph(State)
    g.add_node("ok", ok)
    g.add_node("broken", broken)
    g.add_node("after", lambda s: {"trail": ["after"]})
    g.add_edge(START, "ok").add_edge(START, "broken")
    g.add_edge("ok", "after").add_edge("broken", "after").add_edge("after", END)
    with pytest.raises(Boom) as info:
        g.compile().invoke({})
    assert any("'broken'" in note for note in info.value.__notes__)
    assert not any("'ok'" in note for note in info.value.__notes__)
    assert finished == ["ok"]  # the sibling still finished


def test_branch_exception_names_its_source_node() -> None:
    def route(state: State) -> str:
        raise Boom("cannot decide")

    g = StateGraph(State)
    g.add_node("decider", lambda s: None)
    g.add_edge(START, "decider")
    g.add_conditional_edges("decider", route, [END])
    with pytest.raises(Boom) as info:
        g.compile().invoke({})
    assert any("'decider'" in note for note in getattr(info.value, "__notes__", []))


# ------------------------------------------------------------------ concurrent runs


def test_fifty_concurrent_ainvokes_are_independent() -> None:
    def double(state: State) -> dict[str, Any]:
        return {"count": state.count * 2, "trail": [f"double {state.count}"]}

    async def reply(state: State) -> dict[str, Any]:
        await asyncio.sleep(0.001 * (state.count % 5))
        return {"messages": [AIMessage(f"{state.messages[-1].text} -> {state.count}")]}

    g = StateGraph(State)
    g.add_node("double", double)
    g.add_node("reply", reply)
    g.add_edge(START, "double").add_edge("double", "reply").add_edge("reply", END)
    app = g.compile()

    async def main() -> list[Any]:
        return await asyncio.gather(
            *(app.ainvoke({"count": i, "messages": [f"q{i}"]}) for i in range(50))
        )

    outs = asyncio.run(main())
    for i, out in enumerate(outs):
        assert out.count == 2 * i
        assert out.trail == [f"double {i}"]
        assert [m.text for m in out.messages] == [f"q{i}", f"q{i} -> {2 * i}"]
    all_ids = [m.id for out in outs for m in out.messages]
    assert len(set(all_ids)) == 100


def test_fifty_concurrent_threads_with_a_checkpointer_keep_their_own_history() -> None:
    def reply(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(f"{state.messages[-1].text}!")]}

    g = StateGraph(State)
    g.add_node("reply", reply)
    g.add_edge(START, "reply").add_edge("reply", END)
    app = g.compile(checkpointer=MemoryCheckpointer())

    async def turn(word: str) -> list[Any]:
        return await asyncio.gather(
            *(app.ainvoke({"messages": [f"{word}{i}"]}, thread_id=f"t{i}") for i in range(50))
        )

    asyncio.run(turn("a"))
    outs = asyncio.run(turn("b"))
    for i, out in enumerate(outs):
        assert [m.text for m in out.messages] == [f"a{i}", f"a{i}!", f"b{i}", f"b{i}!"]
