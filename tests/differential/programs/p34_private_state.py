from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    user: str
    reply: str


class Private(TypedDict):
    secret: str


def first(state: State) -> Private:
    return {"secret": state["user"][::-1]}


def second(state: Private) -> State:
    return {"reply": f"the secret is {state['secret']}"}


builder = StateGraph(State)
builder.add_node("first", first)
builder.add_node("second", second)
builder.add_edge(START, "first")
builder.add_edge("first", "second")
builder.add_edge("second", END)
graph = builder.compile()
print(graph.invoke({"user": "alice"}))
