from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    score: int


def grade(state: State) -> str:
    return "pass" if state["score"] > 5 else "retry"


builder = StateGraph(State)
builder.add_node("ask", lambda s: {})
builder.add_node("review", lambda s: {})
builder.add_node("publish", lambda s: {})
builder.add_edge(START, "ask")
builder.add_conditional_edges(
    "ask", grade, {"pass": "publish", "retry": "review", "give up now": END}
)
builder.add_edge("review", "ask")
builder.add_edge("publish", END)
graph = builder.compile(interrupt_before=["publish"], interrupt_after=["review"])
drawing = graph.get_graph()
print(drawing.draw_mermaid())
for edge in drawing.edges:
    print(edge.source, edge.target, edge.data, edge.conditional)
print(drawing.nodes["publish"].metadata, drawing.nodes["review"].metadata)
