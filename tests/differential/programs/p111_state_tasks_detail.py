import operator
from typing import Annotated

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, Send, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    v: str
    log: Annotated[list[str], operator.add]


def ask(state: State):
    return {"v": interrupt({"prompt": "value?"})}


def work(arg: dict):
    return {"log": [f"worked on {arg['x']}"]}


inner = StateGraph(State)
inner.add_node("ask", ask)
inner.add_edge(START, "ask")

builder = StateGraph(State)
builder.add_node("team", inner.compile())
builder.add_node("work", work)
builder.add_conditional_edges(START, lambda s: [Send("work", {"x": "a"}), "team"])
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "tasks"}}
graph.invoke({"v": ""}, config)
snapshot = graph.get_state(config)
for task in snapshot.tasks:
    print(task.name, task.path, task.error, task.result)
    print([i.value for i in task.interrupts])
    print(task.state and task.state["configurable"]["checkpoint_ns"].split(":")[0])
    print(task.state is None or task.state["configurable"]["checkpoint_ns"].endswith(task.id))
graph.invoke(Command(resume="filled"), config)
done = graph.get_state(config)
print(done.tasks, done.next, done.values)
