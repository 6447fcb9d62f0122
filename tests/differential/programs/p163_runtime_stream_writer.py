from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict


class State(TypedDict):
    steps: int


def work(state: State, runtime: Runtime):
    for i in range(state["steps"]):
        runtime.stream_writer({"done": i + 1, "of": state["steps"]})
    return {"steps": 0}


builder = StateGraph(State)
builder.add_node("work", work)
builder.add_edge(START, "work")
builder.add_edge("work", END)
graph = builder.compile()
for chunk in graph.stream({"steps": 2}, stream_mode="custom"):
    print(chunk)
print(graph.invoke({"steps": 3}))
