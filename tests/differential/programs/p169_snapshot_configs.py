from langgraph.checkpoint.memory import InMemorySaver
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
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "pc"}}
graph.invoke({"n": 1}, config)
latest = graph.get_state(config)
parent = graph.get_state(latest.parent_config)
print(latest.values, latest.next, sorted(latest.config["configurable"]))
print(parent.values, parent.next, parent.config == latest.parent_config)
print(latest.parent_config["configurable"]["thread_id"])
