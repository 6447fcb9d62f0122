from dataclasses import dataclass, field

from langgraph.graph import END, START, StateGraph


@dataclass
class State:
    name: str
    visits: list[str] = field(default_factory=list)


def visit(state: State):
    return {"visits": [*state.visits, f"visited by {state.name}"]}


builder = StateGraph(State)
builder.add_node("visit", visit)
builder.add_edge(START, "visit")
builder.add_edge("visit", END)
graph = builder.compile()
result = graph.invoke({"name": "Lin"})
print(result["visits"])
