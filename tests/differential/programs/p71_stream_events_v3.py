from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    n: int


builder = StateGraph(State)
builder.add_node("inc", lambda s: {"n": s["n"] + 1})
builder.add_edge(START, "inc")
builder.add_edge("inc", END)
graph = builder.compile()
run = graph.stream_events({"n": 1}, version="v3")
print(list(run.values))
print(run.output)
print(run.interrupted)
