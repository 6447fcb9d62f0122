from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    ok: bool


def gate(state: State):
    return {"ok": interrupt("allow?") == "yes"}


builder = StateGraph(State)
builder.add_node("gate", gate)
builder.add_edge(START, "gate")
builder.add_edge("gate", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "g"}}
for part in graph.stream({"ok": False}, config, version="v2"):
    print(
        part["type"],
        part["data"]
        if part["type"] != "updates" or "__interrupt__" not in part["data"]
        else "interrupt",
        [i.value for i in part.get("interrupts", ())],
    )
for part in graph.stream(Command(resume="yes"), config, stream_mode="values", version="v2"):
    print(part["type"], part["data"])
