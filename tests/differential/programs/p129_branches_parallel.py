import operator
from collections.abc import Sequence
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    aggregate: Annotated[list, operator.add]
    which: str


verbose = True


def make_node(name: str):
    def node(state: State) -> Any:
        if verbose and name in ("a", "e"):  # b, c and d run at once: their prints would race
            print(f'Adding "{name}" to {state["aggregate"]}')
        return {"aggregate": [name]}

    return node


builder = StateGraph(State)
for name in ["a", "b", "c", "d", "e"]:
    builder.add_node(name, make_node(name))
builder.add_edge(START, "a")


def route_bc_or_cd(state: State) -> Sequence[str]:
    if state["which"] == "cd":
        return ["c", "d"]
    return ["b", "c"]


intermediates = ["b", "c", "d"]
builder.add_conditional_edges("a", route_bc_or_cd, intermediates)
for node in intermediates:
    builder.add_edge(node, "e")
builder.add_edge("e", END)
graph = builder.compile()

print(graph.invoke({"aggregate": [], "which": "bc"}))
print(graph.invoke({"aggregate": [], "which": "cd"}))
verbose = False
for step in graph.stream({"aggregate": [], "which": "cd"}):
    print(step)
