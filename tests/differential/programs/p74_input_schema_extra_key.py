from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class In(TypedDict):
    question: str


class State(TypedDict):
    question: str
    answer: str


builder = StateGraph(State, input_schema=In)
builder.add_node("answer", lambda s: {"answer": s["question"].upper()})
builder.add_edge(START, "answer")
builder.add_edge("answer", END)
graph = builder.compile()
print(graph.invoke({"question": "ok"}))
try:
    print(graph.invoke({"question": "ok", "stray": 1}))
except Exception as error:
    print(type(error).__name__)
