from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    n: int
    trail: str


def route(state: State, config: RunnableConfig):
    limit = config["configurable"].get("limit", 2)
    return "loop" if state["n"] < limit else END


def loop(state: State):
    return {"n": state["n"] + 1, "trail": state["trail"] + "+"}


builder = StateGraph(State)
builder.add_node("loop", loop)
builder.add_edge(START, "loop")
builder.add_conditional_edges("loop", route, ["loop", END])
graph = builder.compile()
print(graph.invoke({"n": 0, "trail": ""}))
print(graph.invoke({"n": 0, "trail": ""}, {"configurable": {"limit": 4}}))

b2 = StateGraph(State)
b2.add_node("first", lambda s: {"trail": "f"})
b2.add_node("target", lambda s: {"trail": s["trail"] + "t"})
b2.add_edge(START, "first")
b2.add_conditional_edges("first", lambda s: "target", "target")
b2.add_edge("target", END)
print(b2.compile().invoke({"n": 0, "trail": ""}))
