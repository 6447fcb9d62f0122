from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    plan: str
    ok: str


def draft(state: State):
    return {"plan": "ship on Monday"}


def confirm(state: State):
    return {"ok": interrupt(f"approve '{state['plan']}'?")}


builder = StateGraph(State)
builder.add_node("draft", draft)
builder.add_node("confirm", confirm)
builder.add_edge(START, "draft")
builder.add_edge("draft", "confirm")
builder.add_edge("confirm", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "ev"}}
run = graph.stream_events({"plan": "", "ok": ""}, config, version="v3")
for state in run.values:
    print(state)
print(run.interrupted, [i.value for i in run.interrupts])
run = graph.stream_events(Command(resume="yes"), config, version="v3")
print(run.output, run.interrupted)
