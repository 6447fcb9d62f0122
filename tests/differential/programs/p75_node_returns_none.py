from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    n: int


def noop(state: State):
    return None


builder = StateGraph(State)
builder.add_node("noop", noop)
builder.add_node("inc", lambda s: {"n": s["n"] + 1})
builder.add_edge(START, "noop")
builder.add_edge("noop", "inc")
builder.add_edge("inc", END)
graph = builder.compile()
for chunk in graph.stream({"n": 0}):
    print(chunk)
