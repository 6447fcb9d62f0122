from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    a: str
    b: str


builder = StateGraph(State)
builder.add_node("first", lambda s: {"a": "A"})
builder.add_node("second", lambda s: {"b": s["a"] + "B"})
builder.add_edge(START, "first")
builder.add_edge("first", "second")
builder.add_edge("second", END)
graph = builder.compile()
print(graph.invoke({"a": "", "b": ""}, stream_mode="updates"))
print(graph.invoke({"a": "", "b": ""}, stream_mode="values"))
