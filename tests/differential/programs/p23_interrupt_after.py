from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    steps: list[str]


def one(state: State):
    return {"steps": state["steps"] + ["one"]}


def two(state: State):
    return {"steps": state["steps"] + ["two"]}


builder = StateGraph(State)
builder.add_node("one", one)
builder.add_node("two", two)
builder.add_edge(START, "one")
builder.add_edge("one", "two")
builder.add_edge("two", END)
graph = builder.compile(checkpointer=InMemorySaver(), interrupt_after=["one"])
config = {"configurable": {"thread_id": "a"}}
print(graph.invoke({"steps": []}, config))
print(graph.get_state(config).next)
print(graph.invoke(None, config))
print(graph.get_state(config).next)
