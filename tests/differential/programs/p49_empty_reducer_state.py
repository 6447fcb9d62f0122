import operator
from typing import Annotated

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    task: str
    log: Annotated[list[str], operator.add]


def wait(state: State):
    interrupt("go on?")
    return {"log": ["waited"]}


builder = StateGraph(State)
builder.add_node("wait", wait)
builder.add_edge(START, "wait")
builder.add_edge("wait", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "e"}}
graph.invoke({"task": "t"}, config)
print(graph.get_state(config).values)
