import operator
from typing import Annotated

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def make(name: str):
    def node(state: State):
        return {"log": [f"{name} saw {len(state['log'])}"]}

    return node


builder = StateGraph(State)
for name in ("a", "b", "c", "d"):
    builder.add_node(name, make(name))
builder.add_edge(START, "a")
builder.add_edge("a", "b")
builder.add_edge("a", "c")
builder.add_edge(["b", "c"], "d")
builder.add_edge("d", END)
graph = builder.compile()

print(graph.invoke({"log": []}))
for chunk in graph.stream({"log": ["seed"]}):
    print(sorted(chunk))
