from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict


class SubgraphState(TypedDict):
    bar: str
    baz: str


def sub_1(state: SubgraphState):
    return {"baz": "baz"}


def sub_2(state: SubgraphState):
    return {"bar": state["bar"] + state["baz"]}


sb = StateGraph(SubgraphState)
sb.add_node(sub_1)
sb.add_node(sub_2)
sb.add_edge(START, "sub_1")
sb.add_edge("sub_1", "sub_2")
subgraph = sb.compile()


class State(TypedDict):
    foo: str


def node_1(state: State):
    return {"foo": "hi! " + state["foo"]}


def node_2(state: State):
    response = subgraph.invoke({"bar": state["foo"]})
    return {"foo": response["bar"]}


builder = StateGraph(State)
builder.add_node("node_1", node_1)
builder.add_node("node_2", node_2)
builder.add_edge(START, "node_1")
builder.add_edge("node_1", "node_2")
graph = builder.compile(checkpointer=InMemorySaver())
plain = builder.compile()
for chunk in plain.stream({"foo": "p"}, subgraphs=True):
    print(chunk)
config = {"configurable": {"thread_id": "1"}}
for chunk in graph.stream({"foo": "foo"}, config, subgraphs=True):
    print(chunk)
for chunk in graph.stream(
    {"foo": "x"}, {"configurable": {"thread_id": "2"}}, stream_mode="values", subgraphs=True
):
    print(chunk)
print(graph.get_state(config).values)
for mode, chunk in graph.stream(
    {"foo": "y"}, {"configurable": {"thread_id": "3"}}, stream_mode=["updates", "values"]
):
    print(mode, chunk)
