"""`with_config`: a config under every run's, as LangGraph's Runnable.with_config."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from typing_extensions import TypedDict

from flowgraph import END, START, GraphRecursionError, RunnableConfig, StateGraph


class State(TypedDict):
    seen: str


def read(state: State, config: RunnableConfig) -> dict[str, Any]:
    c = config["configurable"]
    return {"seen": f"{c.get('user_id', '-')}/{c.get('tenant', '-')}"}


def app() -> Any:
    g = StateGraph(State)
    g.add_node("read", read)
    g.add_edge(START, "read")
    g.add_edge("read", END)
    return g.compile()


def test_bound_configurable_values_merge_with_the_calls_and_the_call_wins() -> None:
    graph = app()
    bound = graph.with_config({"configurable": {"user_id": "ada", "tenant": "t1"}})
    assert bound.invoke({"seen": ""})["seen"] == "ada/t1"
    assert bound.invoke({"seen": ""}, {"configurable": {"tenant": "t2"}})["seen"] == "ada/t2"
    assert bound.invoke({"seen": ""}, configurable={"user_id": "bo"})["seen"] == "bo/t1"
    # the graph it came from is unchanged, and bindings stack
    assert graph.invoke({"seen": ""})["seen"] == "-/-"
    stacked = bound.with_config(configurable={"tenant": "t3"})
    assert stacked.invoke({"seen": ""})["seen"] == "ada/t3"
    assert bound.invoke({"seen": ""})["seen"] == "ada/t1"


def test_a_bound_config_reaches_stream_and_the_async_calls() -> None:
    bound = app().with_config(configurable={"user_id": "cy"})
    assert list(bound.stream({"seen": ""})) == [{"read": {"seen": "cy/-"}}]
    assert asyncio.run(bound.ainvoke({"seen": ""}))["seen"] == "cy/-"


def test_a_bound_recursion_limit_applies_and_a_bad_key_is_named() -> None:
    g = StateGraph(State)
    g.add_node("loop", lambda s: {"seen": s["seen"] + "."})
    g.add_edge(START, "loop")
    g.add_edge("loop", "loop")
    looping = g.compile().with_config(recursion_limit=3)
    with pytest.raises(GraphRecursionError):
        looping.invoke({"seen": ""})
    with pytest.raises(ValueError, match="callbaks"):
        app().with_config(callbaks=[]).invoke({"seen": ""})
