from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    text: str


def add(letter):
    return lambda s: {"text": s["text"] + letter}


inner = StateGraph(State)
inner.add_node("x", add("x"))
inner.add_node("y", add("y"))
inner.add_edge(START, "x")
inner.add_edge("x", "y")
sub = inner.compile()


def call_sub(state: State):
    return {"text": sub.invoke(state)["text"] + "!"}


def make_caller(graph):
    def caller(state: State):
        result = graph.invoke(state)
        return {"text": result["text"] + "?"}

    return caller


builder = StateGraph(State)
builder.add_node("wrapper", call_sub)
builder.add_node("closure", make_caller(sub))
builder.add_node("plain", add("p"))
builder.add_edge(START, "wrapper")
builder.add_edge("wrapper", "closure")
builder.add_edge("closure", "plain")
builder.add_edge("plain", END)
graph = builder.compile()
print(list(graph.get_graph().nodes))
drawing = graph.get_graph(xray=True)
print(list(drawing.nodes))
print([(e.source, e.target) for e in drawing.edges])
print(drawing.draw_mermaid(with_styles=False))
print(graph.invoke({"text": ""}))
