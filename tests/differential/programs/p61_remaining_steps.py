from langgraph.graph import END, START, StateGraph
from langgraph.managed import RemainingSteps
from typing_extensions import TypedDict


class State(TypedDict):
    n: int
    remaining_steps: RemainingSteps


def loop(state: State):
    return {"n": state["n"] + 1}


def route(state: State):
    return END if state["remaining_steps"] <= 2 else "loop"


builder = StateGraph(State)
builder.add_node("loop", loop)
builder.add_edge(START, "loop")
builder.add_conditional_edges("loop", route, ["loop", END])
graph = builder.compile()
print(graph.invoke({"n": 0}, {"recursion_limit": 10}))
