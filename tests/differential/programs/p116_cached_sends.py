import operator
from typing import Annotated

from langgraph.cache.memory import InMemoryCache
from langgraph.graph import START, StateGraph
from langgraph.types import CachePolicy, Send
from typing_extensions import TypedDict


class State(TypedDict):
    numbers: list[int]
    squares: Annotated[list[int], operator.add]


calls = []


def square(arg: dict):
    calls.append(arg["n"])
    return {"squares": [arg["n"] ** 2]}


def fan_out(state: State):
    return [Send("square", {"n": n}) for n in state["numbers"]]


builder = StateGraph(State)
builder.add_node("square", square, cache_policy=CachePolicy())
builder.add_conditional_edges(START, fan_out, ["square"])
graph = builder.compile(cache=InMemoryCache())
print(graph.invoke({"numbers": [2, 3]}, stream_mode="updates"))
print(graph.invoke({"numbers": [3, 4]}, stream_mode="updates"))
print(graph.invoke({"numbers": [4, 2, 5]}, stream_mode=["updates", "values"]))
print(calls)
