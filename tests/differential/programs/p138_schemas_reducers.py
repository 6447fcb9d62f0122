from operator import add
from typing import Annotated

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict


class InputState(TypedDict):
    user_input: str


class OutputState(TypedDict):
    graph_output: str


class OverallState(TypedDict):
    foo: str
    user_input: str
    graph_output: str


class PrivateState(TypedDict):
    bar: str


def node_1(state: InputState) -> OverallState:
    return {"foo": state["user_input"] + " name"}


def node_2(state: OverallState) -> PrivateState:
    return {"bar": state["foo"] + " is"}


def node_3(state: PrivateState) -> OutputState:
    return {"graph_output": state["bar"] + " Lance"}


builder = StateGraph(OverallState, input_schema=InputState, output_schema=OutputState)
builder.add_node("node_1", node_1)
builder.add_node("node_2", node_2)
builder.add_node("node_3", node_3)
builder.add_edge(START, "node_1")
builder.add_edge("node_1", "node_2")
builder.add_edge("node_2", "node_3")
builder.add_edge("node_3", END)
graph = builder.compile()
print(graph.invoke({"user_input": "My"}))


class State(TypedDict):
    foo: int
    bar: Annotated[list[str], add]
    messages: Annotated[list[AnyMessage], add_messages]


def first(state: State):
    return {"foo": 2, "bar": ["bye"], "messages": [AIMessage(content="Hello", id="m2")]}


def second(state: State):
    return {"bar": ["again"], "messages": [AIMessage(content="Hello, edited", id="m2")]}


g = StateGraph(State)
g.add_node(first)
g.add_node(second)
g.add_edge(START, "first")
g.add_edge("first", "second")
result = g.compile().invoke(
    {"foo": 1, "bar": ["hi"], "messages": [HumanMessage(content="Hi", id="m1")]}
)
print(result["foo"], result["bar"])
for message in result["messages"]:
    print(message)
print(add_messages([HumanMessage(content="a", id="1")], [HumanMessage(content="b", id="1")]))
