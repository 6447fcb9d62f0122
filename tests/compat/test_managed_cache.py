"""`RemainingSteps` and node caching the way LangGraph's docs use them (issue 18, item 9).

A loop that stops itself before the recursion limit by reading
`remaining_steps`; a slow node with `CachePolicy(ttl=...)` in a graph
compiled with `cache=InMemoryCache()`, called twice with the same input.
Written once in LangGraph's spelling, run with both libraries.
"""

import operator
import time
from typing import Annotated, Any

from typing_extensions import TypedDict

from tests.compat._libs import Lib


def test_a_loop_reads_its_remaining_steps(lib: Lib) -> None:
    class State(TypedDict):
        drafts: Annotated[list[str], operator.add]
        remaining_steps: lib.RemainingSteps

    seen: list[int] = []

    def draft(state: State) -> dict[str, Any]:
        seen.append(state["remaining_steps"])
        return {"drafts": [f"draft {len(state['drafts']) + 1}"]}

    def should_continue(state: State) -> str:
        return lib.END if state["remaining_steps"] <= 2 else "draft"

    builder = lib.StateGraph(State)
    builder.add_node("draft", draft)
    builder.add_edge(lib.START, "draft")
    builder.add_conditional_edges("draft", should_continue, ["draft", lib.END])
    graph = builder.compile(checkpointer=lib.checkpointer())
    config = {"configurable": {"thread_id": "1"}, "recursion_limit": 6}
    out = graph.invoke({"drafts": []}, config)
    assert seen == [5, 4, 3, 2]
    assert out == {"drafts": ["draft 1", "draft 2", "draft 3", "draft 4"]}
    assert "remaining_steps" not in graph.get_state(config).values


def test_a_cached_node_runs_once_per_input_within_its_ttl(lib: Lib) -> None:
    class State(TypedDict):
        x: int
        result: int

    calls: list[int] = []

    def expensive(state: State) -> dict[str, Any]:
        calls.append(state["x"])
        return {"result": state["x"] * 2}

    builder = lib.StateGraph(State)
    builder.add_node("expensive", expensive, cache_policy=lib.CachePolicy(ttl=1))
    builder.add_edge(lib.START, "expensive")
    builder.add_edge("expensive", lib.END)
    graph = builder.compile(cache=lib.InMemoryCache())

    assert graph.invoke({"x": 5}) == {"x": 5, "result": 10}
    assert graph.invoke({"x": 5}) == {"x": 5, "result": 10}
    assert graph.invoke({"x": 6}) == {"x": 6, "result": 12}
    assert calls == [5, 6]
    time.sleep(1.05)
    graph.invoke({"x": 5})
    assert calls == [5, 6, 5]
