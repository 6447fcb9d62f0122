from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    n: int


builder = StateGraph(State)
builder.add_node("inc", lambda s: {"n": s["n"] + 1})
builder.add_edge(START, "inc")
builder.add_edge("inc", END)
graph = builder.compile(checkpointer=InMemorySaver())
try:
    print(graph.invoke({"n": 1}, {"configurable": {"thread_id": "1"}, "recursion_limt": 5}))
except ValueError:
    print("ValueError")
