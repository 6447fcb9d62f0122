from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    seen: str


def inspect_config(state: State):
    config = get_config()
    return {"seen": f"{config['configurable']['tenant']} {config['metadata']['langgraph_node']}"}


builder = StateGraph(State)
builder.add_node("inspect_config", inspect_config)
builder.add_edge(START, "inspect_config")
builder.add_edge("inspect_config", END)
graph = builder.compile()
print(graph.invoke({"seen": ""}, {"configurable": {"tenant": "acme"}}))
