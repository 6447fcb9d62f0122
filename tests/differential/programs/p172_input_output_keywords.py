from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class In(TypedDict):
    question: str


class Out(TypedDict):
    answer: str


class State(TypedDict):
    question: str
    answer: str


builder = StateGraph(State, input=In, output=Out)
builder.add_node("answer", lambda s: {"answer": s["question"][::-1]})
builder.add_edge(START, "answer")
builder.add_edge("answer", END)
print(builder.compile().invoke({"question": "abc"}))
