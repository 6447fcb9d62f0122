from dataclasses import dataclass

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime, get_runtime
from typing_extensions import TypedDict


@dataclass
class Context:
    model_name: str = "small"
    temperature: float = 0.0


class State(TypedDict):
    report: str
    again: str


def report(state: State, runtime: Runtime[Context]):
    return {"report": f"{runtime.context.model_name} at {runtime.context.temperature}"}


def again(state: State):
    runtime = get_runtime(Context)
    return {"again": runtime.context.model_name.upper()}


builder = StateGraph(State, context_schema=Context)
builder.add_node("report", report)
builder.add_node("again", again)
builder.add_edge(START, "report")
builder.add_edge("report", "again")
builder.add_edge("again", END)
graph = builder.compile()
print(
    graph.invoke({"report": "", "again": ""}, context=Context(model_name="large", temperature=0.5))
)
print(graph.invoke({"report": "", "again": ""}, context=Context()))
