from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    n: int


builder = StateGraph(State)
builder.add_node("inc", lambda s: {"n": s["n"] + 1})
builder.add_edge(START, "inc")
builder.add_edge("inc", END)
graph = builder.compile()
for mode in ("debug", "tasks", "checkpoints"):
    try:
        print(mode, [type(chunk).__name__ for chunk in graph.stream({"n": 0}, stream_mode=mode)])
    except ValueError:
        print(mode, "ValueError")
