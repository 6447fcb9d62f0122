import operator
from typing import Annotated

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    n: int
    seen: Annotated[list[str], operator.add]


def double(state: State):
    return {"n": state["n"] * 2, "seen": ["double"]}


def inc(state: State):
    return {"n": state["n"] + 1, "seen": ["inc"]}


builder = StateGraph(State)
builder.add_node("double", double)
builder.add_node("inc", inc)
builder.add_edge(START, "double")
builder.add_edge("double", "inc")
builder.add_edge("inc", END)
graph = builder.compile()

for state in graph.stream({"n": 5, "seen": []}, stream_mode="values"):
    print(state)
