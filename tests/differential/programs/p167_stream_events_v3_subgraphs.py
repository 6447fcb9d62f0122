from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    text: str


inner = StateGraph(State)
inner.add_node("shout", lambda s: {"text": s["text"].upper()})
inner.add_edge(START, "shout")
inner_graph = inner.compile()

builder = StateGraph(State)
builder.add_node("prep", lambda s: {"text": s["text"] + "!"})
builder.add_node("inner", inner_graph)
builder.add_edge(START, "prep")
builder.add_edge("prep", "inner")
builder.add_edge("inner", END)
graph = builder.compile()
run = graph.stream_events({"text": "hey"}, version="v3")
for sub in run.subgraphs:
    print(len(sub.path), list(sub.values), sub.output)
print(run.output, run.interrupted)
run = graph.stream_events({"text": "ho"}, version="v3")
for event in run.lifecycle:
    print(event["event"], len(event["namespace"]), event.get("graph_name"))
