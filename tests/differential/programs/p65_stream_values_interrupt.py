from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    text: str


def prepare(state: State):
    return {"text": state["text"] + " prepared"}


def confirm(state: State):
    answer = interrupt("confirm?")
    return {"text": state["text"] + f" {answer}"}


builder = StateGraph(State)
builder.add_node("prepare", prepare)
builder.add_node("confirm", confirm)
builder.add_edge(START, "prepare")
builder.add_edge("prepare", "confirm")
builder.add_edge("confirm", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "sv"}}
for state in graph.stream({"text": "order"}, config, stream_mode="values"):
    print(sorted(state), state.get("text"))
for state in graph.stream(Command(resume="confirmed"), config, stream_mode="values"):
    print(state)
