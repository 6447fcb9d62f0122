import operator
from typing import Annotated

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    v: str
    log: Annotated[list[str], operator.add]


def ask(state: State):
    answer = interrupt("value?")
    return {"v": answer, "log": [f"asked, got {answer}"]}


inner = StateGraph(State)
inner.add_node("ask", ask)
inner.add_edge(START, "ask")

middle = StateGraph(State)
middle.add_node("inner", inner.compile())
middle.add_edge(START, "inner")

builder = StateGraph(State)
builder.add_node("outer", middle.compile())
builder.add_edge(START, "outer")
graph = builder.compile(checkpointer=InMemorySaver())


def show(item):
    namespace, chunk = item[0], item[-1]
    if isinstance(chunk, dict) and "__interrupt__" in chunk:
        chunk = {**chunk, "__interrupt__": [i.value for i in chunk["__interrupt__"]]}
    print([ns.split(":")[0] for ns in namespace], *item[1:-1], chunk)


for n, mode in enumerate(["updates", ["updates", "values"]]):
    config = {"configurable": {"thread_id": f"t{n}"}}
    for item in graph.stream({"v": ""}, config, subgraphs=True, stream_mode=mode):
        show(item)
    for item in graph.stream(Command(resume="x"), config, subgraphs=True, stream_mode=mode):
        show(item)

config = {"configurable": {"thread_id": "v2"}}
for part in graph.stream({"v": ""}, config, subgraphs=True, version="v2"):
    print(part["type"], [ns.split(":")[0] for ns in part["ns"]], list(part["data"]))
