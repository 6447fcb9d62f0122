from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    value: str


def inner_a(state: State):
    return {"value": state["value"] + " inner_a"}


def inner_b(state: State):
    return {"value": state["value"] + " inner_b"}


sub = StateGraph(State)
sub.add_node("inner_a", inner_a)
sub.add_node("inner_b", inner_b)
sub.add_edge(START, "inner_a")
sub.add_edge("inner_a", "inner_b")
subgraph = sub.compile()


def outer(state: State):
    return {"value": state["value"] + " outer"}


builder = StateGraph(State)
builder.add_node("outer", outer)
builder.add_node("child", subgraph)
builder.add_edge(START, "outer")
builder.add_edge("outer", "child")
builder.add_edge("child", END)
graph = builder.compile()

for namespace, chunk in graph.stream({"value": "start"}, subgraphs=True):
    print(namespace, chunk)
for namespace, chunk in graph.stream({"value": "x"}, subgraphs=True, stream_mode="values"):
    print(len(namespace), chunk)
