from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    v: str


def ask(state: State):
    return {"v": interrupt({"prompt": "value?"})}


builder = StateGraph(State)
builder.add_node("ask", ask)
builder.add_edge(START, "ask")
builder.add_edge("ask", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "tk"}}
graph.invoke({"v": ""}, config)
snapshot = graph.get_state(config)
print(snapshot.next)
print([t.name for t in snapshot.tasks])
print([i.value for t in snapshot.tasks for i in t.interrupts])
print([i.value for i in snapshot.interrupts])
print(snapshot.config["configurable"]["thread_id"])
