from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel


class State(BaseModel):
    a: str
    b: int = 0


def node_1(state: State):
    return {"a": state.a + "!", "b": state.b + 1}


def node_2(state: State):
    return {"b": state.b * 10}


builder = StateGraph(State)
builder.add_node("node_1", node_1)
builder.add_node("node_2", node_2)
builder.add_edge(START, "node_1")
builder.add_edge("node_1", "node_2")
builder.add_edge("node_2", END)
graph = builder.compile()
result = graph.invoke({"a": "hi"})
print(result["a"], result["b"])
print(sorted(result.keys()))
