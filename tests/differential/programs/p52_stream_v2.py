from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    n: int


builder = StateGraph(State)
builder.add_node("inc", lambda s: {"n": s["n"] + 1})
builder.add_node("dbl", lambda s: {"n": s["n"] * 2})
builder.add_edge(START, "inc")
builder.add_edge("inc", "dbl")
builder.add_edge("dbl", END)
graph = builder.compile()
for part in graph.stream({"n": 1}, stream_mode=["updates", "values"], version="v2"):
    print(part["type"], part["ns"], part["data"])
