from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    n: int


def loop(state: State):
    return {"n": state["n"] + 1}


def again(state: State):
    return "loop" if state["n"] < 150 else END


builder = StateGraph(State)
builder.add_node("loop", loop)
builder.add_edge(START, "loop")
builder.add_conditional_edges("loop", again)
graph = builder.compile()
try:
    print(graph.invoke({"n": 0}))
except GraphRecursionError:
    print("GraphRecursionError")
