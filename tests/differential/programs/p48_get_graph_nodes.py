from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    x: int


builder = StateGraph(State)
builder.add_node("one", lambda s: {"x": 1})
builder.add_node("two", lambda s: {"x": 2})
builder.add_edge(START, "one")
builder.add_edge("one", "two")
builder.add_edge("two", END)
graph = builder.compile()
drawing = graph.get_graph()
print(sorted(drawing.nodes))
print(sorted((e.source, e.target) for e in drawing.edges))
