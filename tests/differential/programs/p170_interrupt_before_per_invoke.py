from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    trail: str


builder = StateGraph(State)
builder.add_node("plan", lambda s: {"trail": s["trail"] + "p"})
builder.add_node("act", lambda s: {"trail": s["trail"] + "a"})
builder.add_edge(START, "plan")
builder.add_edge("plan", "act")
builder.add_edge("act", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "ib"}}
print(graph.invoke({"trail": ""}, config, interrupt_before=["act"]))
print(graph.get_state(config).next)
print(graph.invoke(None, config))
other = {"configurable": {"thread_id": "ia"}}
print(graph.invoke({"trail": ""}, other, interrupt_after=["plan"]))
print(graph.get_state(other).next)
print(graph.invoke({"trail": ""}, {"configurable": {"thread_id": "none"}}))
