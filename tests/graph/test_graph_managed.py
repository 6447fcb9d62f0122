"""`RemainingSteps` (a managed state field) and node caching (`CachePolicy`, `InMemoryCache`).

RemainingSteps: every node reads how many steps may follow its own before
the recursion limit; the value is never stored, returned, or writable.
Caching: a node called again with the same key reuses its return value,
which then goes through the same checks and reducers as a call's.
"""

from __future__ import annotations

import asyncio
import operator
import time
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from flowgraph import (
    END,
    START,
    AIMessage,
    CachePolicy,
    Command,
    GraphRecursionError,
    HumanMessage,
    InMemoryCache,
    InvalidUpdateError,
    MessagesState,
    RemainingSteps,
    Send,
    SerializationError,
    StateGraph,
)
from flowgraph.checkpoint import MemoryCheckpointer, SQLiteCheckpointer


class Loop(TypedDict):
    n: int
    remaining_steps: RemainingSteps


def looping(seen: list[int], stop_below: int | None = None) -> Any:
    def step(state: Loop) -> dict[str, Any]:
        seen.append(state["remaining_steps"])
        return {"n": state["n"] + 1}

    def again(state: Loop) -> str:
        if stop_below is not None and state["remaining_steps"] < stop_below:
            return END
        return "step"

    g = StateGraph(Loop)
    g.add_node("step", step)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", again, ["step", END])
    return g


def test_each_step_reads_the_steps_left_after_it() -> None:
    seen: list[int] = []
    with pytest.raises(GraphRecursionError):
        looping(seen).compile().invoke({"n": 0}, recursion_limit=6)
    assert seen == [5, 4, 3, 2, 1, 0]  # LangGraph's values for the same limit


def test_a_graph_stops_itself_before_the_limit_and_nothing_is_stored(tmp_path: Any) -> None:
    seen: list[int] = []
    app = looping(seen, stop_below=3).compile(checkpointer=SQLiteCheckpointer(tmp_path / "r.db"))
    out = app.invoke({"n": 0}, thread_id="t", recursion_limit=6)
    assert out == {"n": 4}  # not returned
    assert seen == [5, 4, 3, 2]
    assert all("remaining_steps" not in s.values for s in app.get_state_history("t"))
    # a resumed or continued thread counts from its own run's limit
    seen.clear()
    app.invoke({"n": 10}, thread_id="t", recursion_limit=4)
    assert seen == [3, 2]


def test_a_pydantic_state_field_and_a_node_that_writes_it() -> None:
    class State(MessagesState):
        remaining_steps: RemainingSteps

    def node(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(f"{state.remaining_steps} left")]}

    g = StateGraph(State)
    g.add_node("node", node)
    g.add_edge(START, "node")
    out = g.compile().invoke({"messages": [HumanMessage("hi")]}, recursion_limit=10)
    assert out.messages[-1].text == "9 left"
    assert "remaining_steps" not in out.model_fields_set

    g = StateGraph(State)
    g.add_node("cheat", lambda state: {"remaining_steps": 100})
    g.add_edge(START, "cheat")
    with pytest.raises(InvalidUpdateError, match="which the engine manages"):
        g.compile().invoke({"messages": []})
    with pytest.raises(InvalidUpdateError, match="which the engine manages"):
        g.compile().invoke({"messages": [], "remaining_steps": 3})


# -- caching ----------------------------------------------------------------------------


class Work(TypedDict):
    x: int
    out: Annotated[list[int], operator.add]


def cached_graph(calls: list[int], policy: CachePolicy, **compile_kw: Any) -> Any:
    def slow(state: Work) -> dict[str, Any]:
        calls.append(state["x"])
        return {"out": [state["x"] * 2]}

    g = StateGraph(Work)
    g.add_node("slow", slow, cache_policy=policy)
    g.add_edge(START, "slow")
    return g.compile(**compile_kw)


def test_a_hit_does_not_run_the_node_and_writes_the_same() -> None:
    calls: list[int] = []
    app = cached_graph(calls, CachePolicy(), cache=InMemoryCache())
    assert app.invoke({"x": 3, "out": []}) == {"x": 3, "out": [6]}
    assert app.invoke({"x": 3, "out": []}) == {"x": 3, "out": [6]}
    assert app.invoke({"x": 4, "out": []}) == {"x": 4, "out": [8]}
    assert calls == [3, 4]
    app.clear_cache()
    app.invoke({"x": 3, "out": []})
    assert calls == [3, 4, 3]


def test_without_a_cache_the_policy_does_nothing() -> None:
    calls: list[int] = []
    app = cached_graph(calls, CachePolicy())
    app.invoke({"x": 3, "out": []})
    app.invoke({"x": 3, "out": []})
    assert calls == [3, 3]


def test_an_entry_expires_after_its_ttl() -> None:
    calls: list[int] = []
    app = cached_graph(calls, CachePolicy(ttl=0.05), cache=InMemoryCache())
    app.invoke({"x": 3, "out": []})
    app.invoke({"x": 3, "out": []})
    time.sleep(0.1)
    app.invoke({"x": 3, "out": []})
    assert calls == [3, 3]


def test_key_func_says_which_inputs_are_the_same() -> None:
    calls: list[int] = []
    app = cached_graph(
        calls, CachePolicy(key_func=lambda s: str(s["x"] % 2)), cache=InMemoryCache()
    )
    assert app.invoke({"x": 1, "out": []})["out"] == [2]
    assert app.invoke({"x": 3, "out": []})["out"] == [2]  # same key: x=1's result
    assert calls == [1]


def test_messages_from_a_hit_get_this_step_ids_and_a_command_is_replayed() -> None:
    calls: list[str] = []

    def answer(state: MessagesState) -> Command[Any]:
        calls.append(state.messages[-1].text)
        return Command(update={"messages": [AIMessage("cached answer")]}, goto="done")

    g = StateGraph(MessagesState)
    g.add_node(
        "answer",
        answer,
        cache_policy=CachePolicy(key_func=lambda s: s.messages[-1].text),
        destinations=["done"],
    )
    g.add_node("done", lambda state: {"messages": [AIMessage("done")]})
    g.add_edge(START, "answer")
    app = g.compile(checkpointer=MemoryCheckpointer(), cache=InMemoryCache())
    app.invoke({"messages": [HumanMessage("q")]}, thread_id="a")
    out = app.invoke({"messages": [HumanMessage("q")]}, thread_id="a")
    assert calls == ["q"]
    texts = [m.text for m in out.messages]
    assert texts == ["q", "cached answer", "done", "q", "cached answer", "done"]
    assert len({m.id for m in out.messages}) == 6  # the hit's message got a new id


def test_sends_are_cached_per_argument_and_async_nodes_too() -> None:
    calls: list[int] = []

    async def square(arg: dict[str, int]) -> dict[str, Any]:
        calls.append(arg["x"])
        return {"out": [arg["x"] ** 2]}

    g = StateGraph(Work)
    g.add_node("fan", lambda state: {})
    g.add_node("square", square, cache_policy=CachePolicy())
    g.add_edge(START, "fan")
    g.add_conditional_edges("fan", lambda s: [Send("square", {"x": i % 3}) for i in range(6)])
    app = g.compile(cache=InMemoryCache())
    out = asyncio.run(app.ainvoke({"x": 0, "out": []}))
    assert sorted(out["out"]) == [0, 0, 1, 1, 4, 4]
    again = asyncio.run(app.ainvoke({"x": 0, "out": []}))
    assert sorted(again["out"]) == [0, 0, 1, 1, 4, 4]
    assert sorted(set(calls)) == [0, 1, 2] and len(calls) <= 6  # none ran the second time


def test_an_input_the_codec_cannot_key_names_the_node_and_the_fix() -> None:
    def node(state: Work) -> dict[str, Any]:
        return {"out": [1]}

    g = StateGraph(Work)
    g.add_node("fan", lambda state: {})
    g.add_node("node", node, cache_policy=CachePolicy())
    g.add_edge(START, "fan")
    g.add_conditional_edges("fan", lambda s: [Send("node", {"handle": object()})])
    with pytest.raises(SerializationError, match="Node 'node' has a cache_policy") as info:
        g.compile(cache=InMemoryCache()).invoke({"x": 0, "out": []})
    assert "key_func" in str(info.value)


def test_a_cache_policy_needs_a_positive_ttl() -> None:
    with pytest.raises(ValueError, match="positive number of seconds"):
        CachePolicy(ttl=0)


def test_the_engine_marks_exactly_the_cached_results_of_a_step() -> None:
    """Two Sends to one node in one step, one a hit and one not: only the hit is marked,
    and it comes first; a subgraph's hit keeps its mark one level up."""

    async def square(arg: dict[str, int]) -> dict[str, Any]:
        return {"out": [arg["x"] ** 2]}

    g = StateGraph(Work)
    g.add_node("square", square, cache_policy=CachePolicy())
    g.add_conditional_edges(START, lambda s: [Send("square", {"x": x}) for x in s["out"]])
    app = g.compile(cache=InMemoryCache())
    app.invoke({"x": 0, "out": [3]})
    parts = list(app.stream({"x": 0, "out": [4, 3]}, mode="updates"))
    assert [(p.data, p.cached) for p in parts] == [({"out": [9]}, True), ({"out": [16]}, False)]
    items = asyncio.run(_collect(app.astream({"x": 0, "out": [4, 3]}, stream_mode="updates")))
    assert items == [  # both hits now: in task order
        {"square": {"out": [16]}, "__metadata__": {"cached": True}},
        {"square": {"out": [9]}, "__metadata__": {"cached": True}},
    ]
    outer = StateGraph(Work)
    outer.add_node("inner", app)
    outer.add_edge(START, "inner")
    nested = [
        (ns, chunk)
        for ns, chunk in outer.compile().stream({"x": 0, "out": [5, 3]}, subgraphs=True)
        if ns
    ]
    assert [chunk.get("__metadata__") for _, chunk in nested] == [{"cached": True}, None]


async def _collect(items: Any) -> list[Any]:
    return [item async for item in items]
