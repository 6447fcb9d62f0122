import operator
import time
from typing import Annotated

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    answer: str
    log: Annotated[list[str], operator.add]


runs = []


def ask(state: State):
    runs.append("ask")
    time.sleep(0.3)  # LangGraph streams each task's update as it ends: "work" ends first
    return {"answer": interrupt("go on?")}


def work(state: State):
    runs.append("work")
    return {"log": ["worked"]}


builder = StateGraph(State)
builder.add_node("ask", ask)
builder.add_node("work", work)
builder.add_edge(START, "ask")
builder.add_edge(START, "work")
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "r"}}
for chunk in graph.stream({"answer": ""}, config):
    print({k: v if k != "__interrupt__" else [i.value for i in v] for k, v in chunk.items()})
for chunk in graph.stream(Command(resume="yes"), config, stream_mode=["updates", "values"]):
    print(chunk)
print(runs, graph.get_state(config).values)
