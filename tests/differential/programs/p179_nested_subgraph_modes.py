from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    text: str


def adder(mark):
    return lambda state: {"text": state["text"] + mark}


inner = StateGraph(State)
inner.add_node("deep", adder("d"))
inner.add_edge(START, "deep")
middle = StateGraph(State)
middle.add_node("mid", adder("m"))
middle.add_node("inner", inner.compile())
middle.add_edge(START, "mid")
middle.add_edge("mid", "inner")
outer = StateGraph(State)
outer.add_node("top", adder("t"))
outer.add_node("middle", middle.compile())
outer.add_edge(START, "top")
outer.add_edge("top", "middle")
outer.add_edge("middle", END)
graph = outer.compile()
for namespace, mode, chunk in graph.stream(
    {"text": ""}, stream_mode=["updates", "values"], subgraphs=True
):
    print([entry.split(":")[0] for entry in namespace], mode, chunk)
