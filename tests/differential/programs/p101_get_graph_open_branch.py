from typing import Literal

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    n: int


def anywhere(state: State):
    return "b"


builder = StateGraph(State)
builder.add_node("a", lambda s: {})
builder.add_node("b", lambda s: {})
builder.add_node("c", lambda s: {})
builder.add_edge(START, "a")
builder.add_conditional_edges("a", anywhere)
builder.add_edge("b", "c")
drawing = builder.compile().get_graph()
print(drawing.draw_mermaid())
print(drawing.first_node(), drawing.last_node())
print(drawing.edges)

# a cycle that never reaches END
builder = StateGraph(State)
for name in ("ping", "pong", "pang"):
    builder.add_node(name, lambda s: {})
builder.add_edge(START, "ping")
builder.add_edge("ping", "pong")
builder.add_edge("pong", "pang")
builder.add_edge("pang", "ping")
print(builder.compile().get_graph().draw_mermaid(with_styles=False))


# a loop whose way out is a Literal
def again(state: State) -> Literal["work", "__end__"]:
    return END


builder = StateGraph(State)
builder.add_node("work", lambda s: {})
builder.add_node("check", lambda s: {})
builder.add_edge(START, "work")
builder.add_edge("work", "check")
builder.add_conditional_edges("check", again)
drawing = builder.compile().get_graph()
print(drawing.draw_mermaid(with_styles=False))
print(drawing.first_node().id, drawing.last_node().id)
