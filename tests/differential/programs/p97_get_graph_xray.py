from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    text: str


def step(name):
    return lambda s: {"text": s["text"] + name}


inner = StateGraph(State)
inner.add_node("draft", step("d"))
inner.add_node("polish", step("p"))
inner.add_edge(START, "draft")
inner.add_edge("draft", "polish")
inner.add_edge("polish", END)

middle = StateGraph(State)
middle.add_node("plan", step("m"))
middle.add_node("write", inner.compile())
middle.add_edge(START, "plan")
middle.add_edge("plan", "write")

builder = StateGraph(State)
builder.add_node("intake", step("i"))
builder.add_node("team", middle.compile())
builder.add_node("ship", step("s"))
builder.add_edge(START, "intake")
builder.add_edge("intake", "team")
builder.add_edge("team", "ship")
graph = builder.compile()
for xray in (False, 1, True):
    drawing = graph.get_graph(xray=xray)
    print("xray", xray, list(drawing.nodes))
    print([(e.source, e.target) for e in drawing.edges])
    print(drawing.first_node().id, drawing.last_node().id)
    print([drawing.nodes[key].name for key in drawing.nodes])
print(graph.get_graph(xray=True).draw_mermaid())
print(graph.invoke({"text": ""}))
