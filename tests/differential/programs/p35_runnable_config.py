from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    line: str


def who(state: State, config: RunnableConfig):
    user = config["configurable"].get("user_id", "anonymous")
    thread = config["configurable"]["thread_id"]
    node = config["metadata"]["langgraph_node"]
    return {"line": f"{user} on {thread} in {node}"}


builder = StateGraph(State)
builder.add_node("who", who)
builder.add_edge(START, "who")
builder.add_edge("who", END)
graph = builder.compile(checkpointer=InMemorySaver())
print(graph.invoke({"line": ""}, {"configurable": {"thread_id": "c1", "user_id": "u42"}}))
print(graph.invoke({"line": ""}, config={"configurable": {"thread_id": "c2"}}))
