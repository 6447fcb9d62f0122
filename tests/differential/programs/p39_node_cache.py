from langgraph.cache.memory import InMemoryCache
from langgraph.graph import END, START, StateGraph
from langgraph.types import CachePolicy
from typing_extensions import TypedDict


class State(TypedDict):
    x: int
    result: int


calls = []


def expensive(state: State):
    calls.append(state["x"])
    return {"result": state["x"] * state["x"]}


builder = StateGraph(State)
builder.add_node("expensive", expensive, cache_policy=CachePolicy(ttl=60))
builder.add_edge(START, "expensive")
builder.add_edge("expensive", END)
graph = builder.compile(cache=InMemoryCache())

print(graph.invoke({"x": 4, "result": 0}))
print(graph.invoke({"x": 4, "result": 0}))
print(graph.invoke({"x": 5, "result": 0}))
print(calls)
print(graph.invoke({"x": 4, "result": 0}, stream_mode="updates"))
graph.clear_cache()
print(graph.invoke({"x": 4, "result": 0}, stream_mode="updates"))
print(calls)
