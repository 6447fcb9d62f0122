from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class Inner(TypedDict):
    text: str
    tokens: list[str]


def split(state: Inner):
    return {"tokens": state["text"].split()}


inner = StateGraph(Inner)
inner.add_node("split", split)
inner.add_edge(START, "split")
inner.add_edge("split", END)
splitter = inner.compile()


class Outer(TypedDict):
    sentence: str
    count: int


def call_inner(state: Outer):
    result = splitter.invoke({"text": state["sentence"], "tokens": []})
    return {"count": len(result["tokens"])}


builder = StateGraph(Outer)
builder.add_node("call_inner", call_inner)
builder.add_edge(START, "call_inner")
builder.add_edge("call_inner", END)
graph = builder.compile()
print(graph.invoke({"sentence": "one two three four", "count": 0}))
