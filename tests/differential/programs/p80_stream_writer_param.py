from langgraph.graph import END, START, StateGraph
from langgraph.types import StreamWriter
from typing_extensions import TypedDict


class State(TypedDict):
    n: int


def count(state: State, writer: StreamWriter):
    for i in range(state["n"]):
        writer({"tick": i})
    return {"n": 0}


builder = StateGraph(State)
builder.add_node("count", count)
builder.add_edge(START, "count")
builder.add_edge("count", END)
graph = builder.compile()
for mode, chunk in graph.stream({"n": 3}, stream_mode=["custom", "updates"]):
    print(mode, chunk)
