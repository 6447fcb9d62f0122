import operator
from typing import Annotated, Literal

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def step(name):
    return lambda s: {"log": [name]}


def entry(state: State) -> Literal["left", "right"]:
    return "left"


builder = StateGraph(State)
for name in ("left", "right", "long", "merge", "late", "last"):
    builder.add_node(name, step(name), defer=name == "late")
builder.add_conditional_edges(START, entry)
builder.add_edge("left", "long")
builder.add_edge(["long", "right"], "merge")
builder.add_edge("left", "late")
builder.add_edge("merge", "late")
builder.add_edge("late", "last")
builder.add_edge("last", END)
graph = builder.compile()
drawing = graph.get_graph()
print(drawing.draw_mermaid())
print(drawing.edges)
print([(n.id, n.metadata) for n in drawing.nodes.values()])
