from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    name: str
    age: str


def form(state: State):
    name = interrupt("name?")
    age = interrupt("age?")
    return {"name": name, "age": age}


builder = StateGraph(State)
builder.add_node("form", form)
builder.add_edge(START, "form")
builder.add_edge("form", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "form"}}
print(graph.invoke({"name": "", "age": ""}, config)["__interrupt__"][0].value)
print(graph.invoke(Command(resume="Ann"), config)["__interrupt__"][0].value)
print(graph.invoke(Command(resume="31"), config))
