from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    items: list[str]
    done: int


def work(state: State):
    writer = get_stream_writer()
    for i, item in enumerate(state["items"]):
        writer(f"processing {item} ({i + 1}/{len(state['items'])})")
    return {"done": len(state["items"])}


builder = StateGraph(State)
builder.add_node("work", work)
builder.add_edge(START, "work")
builder.add_edge("work", END)
graph = builder.compile()

for chunk in graph.stream({"items": ["a", "b", "c"], "done": 0}, stream_mode="custom"):
    print(chunk)
