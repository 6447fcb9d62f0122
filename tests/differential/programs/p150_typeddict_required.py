import operator
from typing import Annotated, Required, TypedDict

from langgraph.graph import END, START, StateGraph
from typing_extensions import NotRequired as NotRequiredX  # noqa: UP035 (the row's import)
from typing_extensions import TypedDict as TypedDictX


class State(TypedDict, total=False):
    topic: Required[str]
    notes: Annotated[list[str], operator.add]
    summary: str


class Older(TypedDictX):
    topic: str
    draft: NotRequiredX[str]


def take_notes(state: State):
    return {"notes": [f"{state['topic']} is {'summary' in state}"]}


def summarize(state: State):
    return {"summary": " / ".join(state["notes"])}


builder = StateGraph(State)
builder.add_node("take_notes", take_notes)
builder.add_node("summarize", summarize)
builder.add_edge(START, "take_notes")
builder.add_edge("take_notes", "summarize")
builder.add_edge("summarize", END)
graph = builder.compile()
print(graph.invoke({"topic": "owls"}))
print(graph.invoke({"topic": "bats", "notes": ["seen at dusk"]}))


def draft(state: Older):
    return {"draft": state.get("draft", "") + f"about {state['topic']}"}


b2 = StateGraph(Older)
b2.add_node("draft", draft)
b2.add_edge(START, "draft")
b2.add_edge("draft", END)
g2 = b2.compile()
print(g2.invoke({"topic": "moths"}))
print(g2.invoke({"topic": "moths", "draft": "more "}))
