from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from typing_extensions import TypedDict


class State(TypedDict):
    user: str
    fact: str
    recalled: list[str]


def remember(state: State, *, store: BaseStore):
    store.put(("memories", state["user"]), state["fact"], {"text": state["fact"]})
    found = store.search(("memories", state["user"]))
    return {"recalled": sorted(item.value["text"] for item in found)}


builder = StateGraph(State)
builder.add_node("remember", remember)
builder.add_edge(START, "remember")
builder.add_edge("remember", END)
store = InMemoryStore()
graph = builder.compile(checkpointer=InMemorySaver(), store=store)
print(
    graph.invoke(
        {"user": "u1", "fact": "likes tea", "recalled": []}, {"configurable": {"thread_id": "a"}}
    )["recalled"]
)
print(
    graph.invoke(
        {"user": "u1", "fact": "owns a cat", "recalled": []}, {"configurable": {"thread_id": "b"}}
    )["recalled"]
)
print(store.get(("memories", "u1"), "likes tea").value)
