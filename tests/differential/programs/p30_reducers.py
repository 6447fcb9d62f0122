import operator
from typing import Annotated

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


def merge_dicts(left: dict, right: dict) -> dict:
    return {**left, **right}


class State(TypedDict):
    total: Annotated[int, operator.add]
    tags: Annotated[list[str], operator.add]
    meta: Annotated[dict, merge_dicts]
    last: str


def a(state: State):
    return {"total": 2, "tags": ["a"], "meta": {"a": 1}, "last": "a"}


def b(state: State):
    return {"total": 3, "tags": ["b"], "meta": {"b": 2}, "last": "b"}


builder = StateGraph(State)
builder.add_node("a", a)
builder.add_node("b", b)
builder.add_edge(START, "a")
builder.add_edge("a", "b")
builder.add_edge("b", END)
graph = builder.compile()
print(graph.invoke({"total": 10, "tags": ["start"], "meta": {}, "last": ""}))
