from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.memory import InMemoryStore
from langgraph.types import RetryPolicy
from typing_extensions import TypedDict


class State(TypedDict):
    user: str
    count: int


attempts = []


class Busy(Exception):
    pass


def visit(state: State, runtime: Runtime):
    attempts.append(1)
    if len(attempts) == 1:
        raise Busy("try again")
    namespace = ("visits", state["user"])
    found = runtime.store.get(namespace, "count")
    count = (found.value["n"] if found else 0) + 1
    runtime.store.put(namespace, "count", {"n": count})
    return {"count": count}


builder = StateGraph(State)
builder.add_node("visit", visit, retry_policy=[RetryPolicy(max_attempts=2, initial_interval=0.01)])
builder.add_edge(START, "visit")
builder.add_edge("visit", END)
store = InMemoryStore()
graph = builder.compile(store=store)
print(graph.invoke({"user": "ana", "count": 0}))
print(graph.invoke({"user": "ana", "count": 0}))
print(len(attempts), store.get(("visits", "ana"), "count").value)
