from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy
from typing_extensions import TypedDict


class State(TypedDict):
    kind: str


attempts = {"own": 0, "key": 0}


class ServiceDown(Exception):
    pass


def call(state: State):
    attempts[state["kind"]] += 1
    if state["kind"] == "own":
        raise ServiceDown("down")
    raise KeyError("missing")


builder = StateGraph(State)
builder.add_node("call", call, retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01))
builder.add_edge(START, "call")
builder.add_edge("call", END)
graph = builder.compile()
for kind in ("own", "key"):
    try:
        graph.invoke({"kind": kind})
    except (ServiceDown, KeyError) as error:
        print(kind, type(error).__name__, attempts[kind])
