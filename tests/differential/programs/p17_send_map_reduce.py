import operator
from typing import Annotated

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from typing_extensions import TypedDict


class Overall(TypedDict):
    words: list[str]
    lengths: Annotated[list[str], operator.add]


class One(TypedDict):
    word: str


def fan_out(state: Overall):
    return [Send("measure", {"word": w}) for w in state["words"]]


def measure(state: One):
    return {"lengths": [f"{state['word']}={len(state['word'])}"]}


def total(state: Overall):
    return {"lengths": [f"total={len(state['lengths'])}"]}


builder = StateGraph(Overall)
builder.add_node("measure", measure)
builder.add_node("total", total)
builder.add_conditional_edges(START, fan_out, ["measure"])
builder.add_edge("measure", "total")
builder.add_edge("total", END)
graph = builder.compile()

print(graph.invoke({"words": ["sun", "moon", "stars"]}))
