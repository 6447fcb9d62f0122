from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    draft: str
    approved: bool


def write(state: State):
    return {"draft": "Dear team, the launch moves to Friday."}


def approve(state: State):
    answer = interrupt({"question": "Send this?", "draft": state["draft"]})
    return {"approved": answer == "yes"}


builder = StateGraph(State)
builder.add_node("write", write)
builder.add_node("approve", approve)
builder.add_edge(START, "write")
builder.add_edge("write", "approve")
builder.add_edge("approve", END)
graph = builder.compile(checkpointer=InMemorySaver())

config = {"configurable": {"thread_id": "7"}}
result = graph.invoke({"draft": "", "approved": False}, config)
print(result["__interrupt__"][0].value)
print(graph.get_state(config).next)
print(graph.get_state(config).interrupts[0].value["question"])
result = graph.invoke(Command(resume="yes"), config)
print(result)
print(graph.get_state(config).next)
