from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    trail: list


def first(state: State):
    return {"trail": state["trail"] + ["first"]}


def second(state: State):
    return {"trail": state["trail"] + ["second"]}


builder = StateGraph(State)
builder.add_node("first", first)
builder.add_node("second", second)
builder.add_edge(START, "first")
builder.add_edge("first", "second")
builder.add_edge("second", END)

graph = builder.compile(checkpointer=InMemorySaver(), interrupt_before="*")
config = {"configurable": {"thread_id": "every"}}
print(graph.invoke({"trail": []}, config))
for _ in range(3):
    print(graph.get_state(config).next, graph.invoke(None, config))

after = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "after"}}
for chunk in after.stream({"trail": []}, config, interrupt_after="*"):
    print(chunk)
print(after.get_state(config).next)
