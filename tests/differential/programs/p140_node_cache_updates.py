import time

from langgraph.cache.memory import InMemoryCache
from langgraph.graph import START, StateGraph
from langgraph.types import CachePolicy
from typing_extensions import TypedDict


class State(TypedDict):
    x: int
    result: int


def expensive_node(state: State) -> dict[str, int]:
    time.sleep(0.2)
    return {"result": state["x"] * 2}


builder = StateGraph(State)
builder.add_node("expensive_node", expensive_node, cache_policy=CachePolicy(ttl=3))
builder.set_entry_point("expensive_node")
builder.set_finish_point("expensive_node")
graph = builder.compile(cache=InMemoryCache())

print(graph.invoke({"x": 5}, stream_mode="updates"))
print(graph.invoke({"x": 5}, stream_mode="updates"))
for chunk in graph.stream({"x": 5}):
    print(chunk)
for chunk in graph.stream({"x": 6}):
    print(chunk)


def key_on_x(state: State) -> str:
    return str(state["x"])


counted = []


def counting(state: State):
    counted.append(state)
    return {"result": state["x"] + 1}


keyed = StateGraph(State)
keyed.add_node("counting", counting, cache_policy=CachePolicy(key_func=key_on_x))
keyed.add_edge(START, "counting")
keyed_graph = keyed.compile(cache=InMemoryCache())
print(keyed_graph.invoke({"x": 1, "result": 0}))
print(keyed_graph.invoke({"x": 1, "result": 99}))
print(len(counted))
