from langgraph.graph import START, StateGraph
from langgraph.types import RetryPolicy
from typing_extensions import TypedDict


class State(TypedDict):
    plan: list[str]
    result: str


class Busy(Exception):
    pass


class Throttled(Exception):
    pass


class Broken(Exception):
    pass


ERRORS = {"busy": Busy, "throttled": Throttled, "broken": Broken}
attempts = []


def fetch(state: State):
    attempts.append(1)
    plan = state["plan"]
    if len(attempts) <= len(plan):
        raise ERRORS[plan[len(attempts) - 1]](f"attempt {len(attempts)}")
    return {"result": f"ok after {len(attempts)} attempts"}


builder = StateGraph(State)
builder.add_node(
    "fetch",
    fetch,
    retry_policy=[
        RetryPolicy(max_attempts=2, initial_interval=0.01, jitter=False, retry_on=Busy),
        RetryPolicy(max_attempts=4, initial_interval=0.01, jitter=False, retry_on=Throttled),
    ],
)
builder.add_edge(START, "fetch")
graph = builder.compile()
for plan in (
    ["busy", "throttled", "throttled"],
    ["busy", "busy"],
    ["throttled", "busy", "throttled", "throttled"],
    ["broken"],
):
    attempts.clear()
    try:
        print(plan, graph.invoke({"plan": plan, "result": ""})["result"])
    except Exception as exc:
        print(plan, type(exc).__name__, exc, len(attempts))
