from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict


class State(TypedDict):
    count: int
    trail: list[str]


def step(state: State) -> Command[Literal["step", "finish"]]:
    count = state["count"] + 1
    trail = state["trail"] + [f"step{count}"]
    return Command(update={"count": count, "trail": trail}, goto="step" if count < 4 else "finish")


def finish(state: State) -> Command[Literal["__end__"]]:
    return Command(update={"trail": state["trail"] + ["finish"]}, goto=END)


builder = StateGraph(State)
builder.add_node("step", step)
builder.add_node("finish", finish)
builder.add_edge(START, "step")
graph = builder.compile()

for chunk in graph.stream({"count": 0, "trail": []}):
    print(chunk)
