from __future__ import annotations

import asyncio
from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict


class State(TypedDict):
    trail: str


async def first(state: State) -> Command[Literal["second", "third"]]:
    return Command(update={"trail": state["trail"] + "1"}, goto="second")


class Second:
    def __call__(self, state: State) -> Command[Literal["third"]]:
        return Command(update={"trail": state["trail"] + "2"}, goto="third")


def third(state: State) -> Command[Literal["__end__"]]:
    return Command(update={"trail": state["trail"] + "3"}, goto=END)


builder = StateGraph(State)
builder.add_node("first", first)
builder.add_node("second", Second())
builder.add_node("third", third)
builder.add_edge(START, "first")
graph = builder.compile()
print(asyncio.run(graph.ainvoke({"trail": ""})))


def hop(state: State):
    return Command(update={"trail": state["trail"] + "h"}, goto="land")


b2 = StateGraph(State)
b2.add_node("hop", hop, destinations=["land"])
b2.add_node("land", lambda s: {"trail": s["trail"] + "l"})
b2.add_edge(START, "hop")
b2.add_edge("land", END)
print(b2.compile().invoke({"trail": ""}))
