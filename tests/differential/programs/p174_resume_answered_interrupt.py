from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    answer: str


def ask(state: State):
    return {"answer": interrupt("ship it?")}


builder = StateGraph(State)
builder.add_node("ask", ask)
builder.add_edge(START, "ask")
builder.add_edge("ask", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "rs"}}
graph.invoke({"answer": ""}, config)
paused = graph.get_state(config)
print(graph.invoke(Command(resume="yes"), config))
print(graph.invoke(Command(resume="no"), paused.config))
