from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    topic: str
    draft: str
    words: int


def write(state: State):
    return {"draft": f"A note about {state['topic']}."}


def count(state: State):
    return {"words": len(state["draft"].split())}


builder = StateGraph(State)
builder.add_node("write", write)
builder.add_node("count", count)
builder.add_edge(START, "write")
builder.add_edge("write", "count")
builder.add_edge("count", END)
graph = builder.compile()

for chunk in graph.stream({"topic": "owls"}):
    print(chunk)
for chunk in graph.stream({"topic": "bats"}, stream_mode="updates"):
    for node, update in chunk.items():
        print(node, "->", update)
