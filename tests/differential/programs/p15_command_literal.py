from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict


class State(TypedDict):
    request: str
    handled_by: str


def triage(state: State) -> Command[Literal["billing", "support"]]:
    target = "billing" if "invoice" in state["request"] else "support"
    return Command(update={"handled_by": "triage"}, goto=target)


def billing(state: State):
    return {"handled_by": state["handled_by"] + "+billing"}


def support(state: State):
    return {"handled_by": state["handled_by"] + "+support"}


builder = StateGraph(State)
builder.add_node("triage", triage)
builder.add_node("billing", billing)
builder.add_node("support", support)
builder.add_edge(START, "triage")
builder.add_edge("billing", END)
builder.add_edge("support", END)
graph = builder.compile()

print(graph.invoke({"request": "my invoice is wrong"}))
print(graph.invoke({"request": "the app crashes"}))
