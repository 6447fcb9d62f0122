import operator
from typing import Annotated

from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, StateGraph
from langgraph.managed import RemainingSteps
from langgraph.types import RetryPolicy
from typing_extensions import TypedDict


class State(TypedDict):
    value: Annotated[list, operator.add]
    remaining_steps: RemainingSteps


attempts = {"flaky": 0}


def flaky(state: State):
    attempts["flaky"] += 1
    if attempts["flaky"] < 3:
        raise ValueError(f"attempt {attempts['flaky']} failed")
    return {"value": ["flaky ok"]}


builder = StateGraph(State)
builder.add_node(
    "flaky",
    flaky,
    retry_policy=RetryPolicy(max_attempts=5, initial_interval=0.01, retry_on=ValueError),
)
builder.add_edge(START, "flaky")
builder.add_edge("flaky", END)
graph = builder.compile()
print(graph.invoke({"value": []}))
print(attempts)


def a(state: State):
    print("a", state["remaining_steps"])
    return {"value": ["a"]}


def b(state: State):
    print("b", state["remaining_steps"])
    return {"value": ["b"]}


def route(state: State):
    if state["remaining_steps"] <= 2:
        return END
    return "b"


loop = StateGraph(State)
loop.add_node(a)
loop.add_node(b)
loop.add_edge(START, "a")
loop.add_conditional_edges("a", route)
loop.add_edge("b", "a")
looping = loop.compile()
print(looping.invoke({"value": []}, {"recursion_limit": 6}))

endless = StateGraph(State)
endless.add_node("a", lambda state: {"value": ["a"]})
endless.add_node("b", lambda state: {"value": ["b"]})
endless.add_edge(START, "a")
endless.add_edge("a", "b")
endless.add_edge("b", "a")
try:
    endless.compile().invoke({"value": []}, {"recursion_limit": 4})
except GraphRecursionError:
    print("Recursion Error")
