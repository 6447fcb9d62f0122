from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy
from typing_extensions import TypedDict


class State(TypedDict):
    result: str


attempts = []


class Flaky(Exception):
    pass


def fetch(state: State):
    attempts.append(1)
    if len(attempts) < 3:
        raise Flaky(f"attempt {len(attempts)} failed")
    return {"result": f"ok after {len(attempts)} attempts"}


builder = StateGraph(State)
builder.add_node(
    "fetch", fetch, retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False)
)
builder.add_edge(START, "fetch")
builder.add_edge("fetch", END)
graph = builder.compile()
print(graph.invoke({"result": ""}))

attempts.clear()
b2 = StateGraph(State)
b2.add_node("fetch", fetch, retry_policy=RetryPolicy(max_attempts=2, initial_interval=0.01))
b2.add_edge(START, "fetch")
g2 = b2.compile()
try:
    g2.invoke({"result": ""})
except Flaky as error:
    print("gave up:", error, len(attempts))
