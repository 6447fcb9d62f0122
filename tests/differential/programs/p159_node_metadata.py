from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    seen: str


def tagged(state: State, config: RunnableConfig):
    return {"seen": f"{config['metadata'].get('team')} {config['metadata']['langgraph_node']}"}


builder = StateGraph(State)
builder.add_node("tagged", tagged, metadata={"team": "search"})
builder.add_edge(START, "tagged")
builder.add_edge("tagged", END)
graph = builder.compile()
print(graph.invoke({"seen": ""}))
