import operator
from dataclasses import dataclass, field
from typing import Annotated

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph


@dataclass
class State:
    name: str
    visits: Annotated[list[str], operator.add] = field(default_factory=list)
    count: int = 0
    note: str | None = None


def visit(state: State):
    print("visit sees", type(state).__name__, state)
    return {"visits": [f"visited by {state.name}"], "count": state.count + 1}


def restate(state: State):
    print("restate sees", state)
    return State(name="renamed", visits=["from an instance"])


def route(state: State):
    print("route sees", type(state).__name__, state.count)
    return "restate"


builder = StateGraph(State)
builder.add_node("visit", visit)
builder.add_node("restate", restate)
builder.add_edge(START, "visit")
builder.add_conditional_edges("visit", route, ["restate"])
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "dc"}}
for mode, chunk in graph.stream({"name": "Lin"}, config, stream_mode=["values", "updates"]):
    print(mode, chunk)
print(graph.get_state(config).values)
print(graph.invoke({"name": "Bo"}, {"configurable": {"thread_id": "dc2"}}))
print(graph.invoke(State(name="Al"), {"configurable": {"thread_id": "dc3"}}))
