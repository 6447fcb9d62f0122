from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    count: int


def bad(state: State):
    return {"count": "three"}


builder = StateGraph(State)
builder.add_node("bad", bad)
builder.add_edge(START, "bad")
builder.add_edge("bad", END)
graph = builder.compile()
try:
    print(graph.invoke({"count": 1}))
except Exception as error:
    print(type(error).__name__)
