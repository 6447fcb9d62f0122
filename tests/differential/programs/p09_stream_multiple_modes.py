from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    text: str


def shout(state: State):
    get_stream_writer()({"progress": "shouting"})
    return {"text": state["text"].upper()}


def exclaim(state: State):
    return {"text": state["text"] + "!"}


builder = StateGraph(State)
builder.add_node("shout", shout)
builder.add_node("exclaim", exclaim)
builder.add_edge(START, "shout")
builder.add_edge("shout", "exclaim")
builder.add_edge("exclaim", END)
graph = builder.compile()

for mode, chunk in graph.stream({"text": "hey"}, stream_mode=["updates", "values", "custom"]):
    print(mode, chunk)
