import operator
from typing import Annotated

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    log: Annotated[list[str], operator.add]


builder = StateGraph(State)
builder.add_node("a", lambda s: {"log": ["a"]})
builder.add_node("b", lambda s: {"log": ["b"]})
builder.add_node("b2", lambda s: {"log": ["b2"]})
builder.add_node("c", lambda s: {"log": ["c"]})
builder.add_node("join", lambda s: {"log": [f"join after {len(s['log'])}"]}, defer=True)
builder.add_edge(START, "a")
builder.add_edge("a", "b")
builder.add_edge("b", "b2")
builder.add_edge("a", "c")
builder.add_edge("b2", "join")
builder.add_edge("c", "join")
builder.add_edge("join", END)
graph = builder.compile()
print(graph.invoke({"log": []}))
