from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    ok: str


def ask(state: State):
    return {"ok": interrupt("proceed?")}


builder = StateGraph(State)
builder.add_node("ask", ask)
builder.add_edge(START, "ask")
builder.add_edge("ask", END)
graph = builder.compile(checkpointer=InMemorySaver())
for chunk in graph.stream({"ok": ""}, {"configurable": {"thread_id": "x"}}):
    print(chunk)
