from langgraph.cache.memory import InMemoryCache
from langgraph.graph import END, START, StateGraph
from langgraph.types import CachePolicy
from typing_extensions import TypedDict


class State(TypedDict):
    query: str
    answer: str


calls = []


def lookup(state: State):
    calls.append(state["query"])
    return {"answer": state["query"].strip().lower()}


builder = StateGraph(State)
builder.add_node(
    "lookup", lookup, cache_policy=CachePolicy(key_func=lambda s: s["query"].strip().lower())
)
builder.add_edge(START, "lookup")
builder.add_edge("lookup", END)
graph = builder.compile(cache=InMemoryCache())
for query in ("Owls", " owls ", "OWLS", "bats"):
    print(graph.invoke({"query": query, "answer": ""}, stream_mode="updates"))
print(calls)
