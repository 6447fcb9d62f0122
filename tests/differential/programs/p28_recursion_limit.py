from langgraph.errors import GraphRecursionError
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    n: int


def loop(state: State):
    return {"n": state["n"] + 1}


def again(state: State):
    return "loop"


builder = StateGraph(State)
builder.add_node("loop", loop)
builder.add_edge(START, "loop")
builder.add_conditional_edges("loop", again, ["loop"])
graph = builder.compile()
try:
    graph.invoke({"n": 0}, {"recursion_limit": 6})
except GraphRecursionError:
    print("stopped by the recursion limit")

seen = []
try:
    for chunk in graph.stream({"n": 0}, {"recursion_limit": 4}):
        seen.append(chunk["loop"]["n"])
except GraphRecursionError:
    print("streamed", seen)
