from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    answer: str


def ask(state: State):
    return {"answer": interrupt("your answer?")}


builder = StateGraph(State)
builder.add_node("ask", ask)
builder.add_edge(START, "ask")
builder.add_edge("ask", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "v2"}}
out = graph.invoke({"answer": ""}, config, version="v2")
print(out.value)
print([i.value for i in out.interrupts])
out = graph.invoke(Command(resume="42"), config, version="v2")
print(out.value, out.interrupts)
