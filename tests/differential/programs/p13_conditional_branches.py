from typing import Literal

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    number: int
    verdict: str


def classify(state: State):
    return {}


def route(state: State) -> Literal["even", "odd"]:
    return "even" if state["number"] % 2 == 0 else "odd"


def even(state: State):
    return {"verdict": f"{state['number']} is even"}


def odd(state: State):
    return {"verdict": f"{state['number']} is odd"}


builder = StateGraph(State)
builder.add_node("classify", classify)
builder.add_node("even", even)
builder.add_node("odd", odd)
builder.add_edge(START, "classify")
builder.add_conditional_edges("classify", route)
builder.add_edge("even", END)
builder.add_edge("odd", END)
graph = builder.compile()

for n in (3, 8):
    print(graph.invoke({"number": n}))


def route_map(state: State):
    return "big" if state["number"] > 10 else "small"


b2 = StateGraph(State)
b2.add_node("classify", classify)
b2.add_node("even", even)
b2.add_node("odd", odd)
b2.add_edge(START, "classify")
b2.add_conditional_edges("classify", route_map, {"big": "even", "small": "odd"})
g2 = b2.compile()
print(g2.invoke({"number": 12}), g2.invoke({"number": 2}))
