from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    joke: str
    rating: int


def tell(state: State):
    return {"joke": "Why did the owl hoot? To give a hoot."}


def rate(state: State):
    return {"rating": len(state["joke"]) % 10}


builder = StateGraph(State)
builder.add_node("tell", tell)
builder.add_node("rate", rate)
builder.add_edge(START, "tell")
builder.add_edge("tell", "rate")
builder.add_edge("rate", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "h"}}
graph.invoke({"joke": "", "rating": 0}, config)

for snapshot in graph.get_state_history(config):
    print(snapshot.next, snapshot.values)
