from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    x: int


def route(state: State):
    return "big" if state["x"] > 1 else "small"


builder = StateGraph(State)
builder.add_node("start_here", lambda s: {})
builder.add_node("big", lambda s: {})
builder.add_node("small", lambda s: {})
builder.add_edge(START, "start_here")
builder.add_conditional_edges("start_here", route, ["big", "small"])
builder.add_edge("big", END)
builder.add_edge("small", END)
graph = builder.compile()
print(graph.get_graph().draw_mermaid())
