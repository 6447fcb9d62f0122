from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    steps: list[str]


def make(name: str):
    def node(state: State):
        print("running", name)
        return {"steps": state["steps"] + [name]}

    return node


builder = StateGraph(State)
for name in ["plan", "act", "review"]:
    builder.add_node(name, make(name))
builder.add_edge(START, "plan")
builder.add_edge("plan", "act")
builder.add_edge("act", "review")
builder.add_edge("review", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "1"}}

for chunk in graph.stream({"steps": []}, config):
    print(chunk)
    if "plan" in chunk:
        break

print(graph.get_state(config).values)
print(graph.get_state(config).next)

for chunk in graph.stream(None, config, stream_mode="values"):
    print(chunk)
print(graph.get_state(config).next)

for chunk in builder.compile().stream({"steps": []}, stream_mode="values"):
    print(chunk)
    if len(chunk["steps"]) == 2:
        break
