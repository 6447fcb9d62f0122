from langgraph.graph import StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    value: int
    path: str


def start(state: State):
    return {"path": "start"}


def small(state: State):
    return {"path": state["path"] + ">small"}


def large(state: State):
    return {"path": state["path"] + ">large"}


builder = StateGraph(State)
builder.add_node("start", start)
builder.add_node("small", small)
builder.add_node("large", large)
builder.set_entry_point("start")
builder.add_conditional_edges("start", lambda s: "large" if s["value"] > 5 else "small")
builder.set_finish_point("small")
builder.set_finish_point("large")
graph = builder.compile()
print(graph.invoke({"value": 9, "path": ""}), graph.invoke({"value": 1, "path": ""}))

b2 = StateGraph(State)
b2.add_node("small", small)
b2.add_node("large", large)
b2.set_conditional_entry_point(lambda s: "large" if s["value"] > 5 else "small", ["small", "large"])
g2 = b2.compile()
print(g2.invoke({"value": 7, "path": "entry"}))
