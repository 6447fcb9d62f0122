from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict


class State(TypedDict):
    where: str


def hop(state: State):
    return Command(goto="hidden", update={"where": "hop"})


builder = StateGraph(State)
builder.add_node("hop", hop)
builder.add_node("hidden", lambda s: {"where": s["where"] + ">hidden"})
builder.add_edge(START, "hop")
builder.add_edge("hidden", END)
try:
    print(builder.compile().invoke({"where": ""}))
except Exception as error:
    print(type(error).__name__)
