from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    name: str
    greeting: str


def ask(state: State):
    name = interrupt("What is your name?")
    return {"name": name}


def greet(state: State):
    return {"greeting": f"Hello, {state['name']}!"}


builder = StateGraph(State)
builder.add_node("ask", ask)
builder.add_node("greet", greet)
builder.add_edge(START, "ask")
builder.add_edge("ask", "greet")
builder.add_edge("greet", END)
graph = builder.compile(checkpointer=InMemorySaver())

config = {"configurable": {"thread_id": "i"}}
for chunk in graph.stream({"name": "", "greeting": ""}, config):
    if "__interrupt__" in chunk:
        print("paused:", chunk["__interrupt__"][0].value)
    else:
        print(chunk)
for chunk in graph.stream(Command(resume="Grace"), config):
    print(chunk)
