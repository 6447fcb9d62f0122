from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    trail: str


builder = StateGraph(State)
builder.add_node("first", lambda s: {"trail": s["trail"] + "1"})
builder.add_node("last", lambda s: {"trail": s["trail"] + "2"})
builder.add_edge(START, "first")
builder.add_edge("first", "last")
graph = builder.compile()
print(graph.invoke({"trail": ""}))
for chunk in graph.stream({"trail": "x"}, stream_mode="values"):
    print(chunk)
