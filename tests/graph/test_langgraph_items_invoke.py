"""`invoke(..., stream_mode=..., version=...)` returns what LangGraph's returns (issue 30).

LangGraph's `invoke` with a stream mode other than "values" returns the list
of the stream's items (a cached node's update says so in `__metadata__`);
`version="v2"` returns a `GraphOutput` with `.value` and `.interrupts`.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict

import pytest
from pydantic import BaseModel

from tests.compat._libs import LIBRARIES, Lib, load
from tests.graph.test_langgraph_items_stream import pausing, plain


@pytest.fixture(params=LIBRARIES)
def lib(request: pytest.FixtureRequest) -> Lib:
    return load(request.param)


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def config(lib: Lib, thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def test_invoke_with_updates_returns_the_list_of_updates(lib: Lib) -> None:
    chunks = pausing(lib).invoke({"log": []}, config(lib, "t"), stream_mode="updates")
    assert plain(chunks) == [
        {"a": {"log": ["a"]}},
        {"__interrupt__": (("Interrupt", "which?"),)},
    ]


def test_invoke_with_a_list_of_modes_returns_pairs(lib: Lib) -> None:
    chunks = pausing(lib).invoke({"log": []}, config(lib, "t"), stream_mode=["updates", "custom"])
    assert plain(chunks) == [
        ("custom", {"progress": "a"}),
        ("updates", {"a": {"log": ["a"]}}),
        ("updates", {"__interrupt__": (("Interrupt", "which?"),)}),
    ]


def test_invoke_with_values_is_the_final_state(lib: Lib) -> None:
    out = pausing(lib).invoke({"log": []}, config(lib, "t"), stream_mode="values")
    assert plain(out) == {"log": ["a"], "__interrupt__": [("Interrupt", "which?")]}


def test_ainvoke_with_updates(lib: Lib) -> None:
    chunks = asyncio.run(pausing(lib).ainvoke({"log": []}, config(lib, "t"), stream_mode="updates"))
    assert plain(chunks)[0] == {"a": {"log": ["a"]}}


def cached(lib: Lib) -> Any:
    calls: list[int] = []

    def slow(state: Log) -> dict[str, Any]:
        calls.append(1)
        return {"log": ["slow"]}

    graph = lib.StateGraph(Log)
    graph.add_node("slow", slow, cache_policy=lib.CachePolicy())
    graph.add_node("fast", lambda state: {"log": ["fast"]})
    graph.add_edge(lib.START, "slow")
    graph.add_edge("slow", "fast")
    app = graph.compile(cache=lib.InMemoryCache())
    app.calls = calls  # type: ignore[attr-defined]
    return app


def test_a_cached_nodes_update_carries_metadata(lib: Lib) -> None:
    app = cached(lib)
    first = app.invoke({"log": []}, stream_mode="updates")
    again = app.invoke({"log": []}, stream_mode="updates")
    assert first == [{"slow": {"log": ["slow"]}}, {"fast": {"log": ["fast"]}}]
    assert again == [
        {"slow": {"log": ["slow"]}, "__metadata__": {"cached": True}},
        {"fast": {"log": ["fast"]}},
    ]
    assert app.calls == [1]
    typed = app.invoke({"log": []}, stream_mode="updates", version="v2")
    assert typed[0] == {
        "type": "updates",
        "ns": (),
        "data": {"slow": {"log": ["slow"]}, "__metadata__": {"cached": True}},
    }


def test_astream_marks_a_cached_node_too(lib: Lib) -> None:
    app = cached(lib)
    app.invoke({"log": []})

    async def read() -> list[Any]:
        return [c async for c in app.astream({"log": []}, stream_mode=["updates", "values"])]

    assert asyncio.run(read()) == [
        ("values", {"log": []}),
        ("updates", {"slow": {"log": ["slow"]}, "__metadata__": {"cached": True}}),
        ("values", {"log": ["slow"]}),
        ("updates", {"fast": {"log": ["fast"]}}),
        ("values", {"log": ["slow", "fast"]}),
    ]


def test_invoke_v2_returns_the_value_and_the_interrupts(lib: Lib) -> None:
    app = pausing(lib)
    paused = app.invoke({"log": []}, config(lib, "t"), version="v2")
    assert type(paused).__name__ == "GraphOutput"
    assert paused.value == {"log": ["a"]}
    assert [i.value for i in paused.interrupts] == ["which?"]
    assert isinstance(paused.interrupts, tuple)
    done = app.invoke(lib.Command(resume="b!"), config(lib, "t"), version="v2")
    assert (done.value, done.interrupts) == ({"log": ["a", "b!"]}, ())


def test_ainvoke_v2(lib: Lib) -> None:
    out = asyncio.run(pausing(lib).ainvoke({"log": []}, config(lib, "t"), version="v2"))
    assert out.value == {"log": ["a"]}
    assert [i.value for i in out.interrupts] == ["which?"]


class Counter(BaseModel):
    count: int = 0


def test_invoke_v2_of_a_pydantic_state_is_the_model(lib: Lib) -> None:
    graph = lib.StateGraph(Counter)
    graph.add_node("up", lambda state: {"count": state.count + 1})
    graph.add_edge(lib.START, "up")
    out = graph.compile().invoke({"count": 1}, version="v2")
    assert out.value == Counter(count=2)
    assert out.interrupts == ()


def test_invoke_v2_with_updates_is_the_list_of_typed_parts(lib: Lib) -> None:
    chunks = pausing(lib).invoke({"log": []}, config(lib, "t"), stream_mode="updates", version="v2")
    assert plain(chunks) == [
        {"type": "updates", "ns": (), "data": {"a": {"log": ["a"]}}},
        {"type": "updates", "ns": (), "data": {"__interrupt__": (("Interrupt", "which?"),)}},
    ]


def test_an_entrypoint_streams_and_invokes_as_langgraphs(lib: Lib) -> None:
    @lib.task
    def double(x: int) -> int:
        return 2 * x

    @lib.entrypoint()
    def flow(x: int) -> int:
        return int(double(x).result()) + 1

    assert flow.invoke(3, stream_mode="updates") == [{"double": 6}, {"flow": 7}]
    out = flow.invoke(3, version="v2")
    assert (out.value, out.interrupts) == (7, ())
    assert list(flow.stream(3, stream_mode=["values", "updates"])) == [
        ("updates", {"double": 6}),
        ("updates", {"flow": 7}),
        ("values", 7),
    ]
    assert list(flow.stream(3, version="v2"))[-1] == {
        "type": "updates",
        "ns": (),
        "data": {"flow": 7},
    }
    run = flow.stream_events(3, version="v3")
    assert (list(run.values), run.output) == ([7], 7)
