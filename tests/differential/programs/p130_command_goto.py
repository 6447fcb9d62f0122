from typing import Literal

from langgraph.graph import START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict


class State(TypedDict):
    foo: str


def node_a(state: State) -> Command[Literal["node_b", "node_c"]]:
    print("Called A")
    value = "b" if len(state["foo"]) % 2 == 0 else "c"
    if value == "b":
        goto = "node_b"
    else:
        goto = "node_c"
    return Command(update={"foo": value}, goto=goto)


def node_b(state: State):
    print("Called B")
    return {"foo": state["foo"] + "b"}


def node_c(state: State):
    print("Called C")
    return {"foo": state["foo"] + "c"}


builder = StateGraph(State)
builder.add_edge(START, "node_a")
builder.add_node(node_a)
builder.add_node(node_b)
builder.add_node(node_c)
graph = builder.compile()

print(graph.invoke({"foo": ""}))
print(graph.invoke({"foo": "x"}))
for chunk in graph.stream({"foo": "yy"}):
    print(chunk)
