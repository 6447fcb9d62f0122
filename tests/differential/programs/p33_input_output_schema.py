from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class Input(TypedDict):
    question: str


class Output(TypedDict):
    answer: str


class Overall(TypedDict):
    question: str
    notes: str
    answer: str


def think(state: Input):
    return {"notes": f"thinking about {state['question']}"}


def answer(state: Overall):
    return {"answer": f"answer ({state['notes']})"}


builder = StateGraph(Overall, input_schema=Input, output_schema=Output)
builder.add_node("think", think)
builder.add_node("answer", answer)
builder.add_edge(START, "think")
builder.add_edge("think", "answer")
builder.add_edge("answer", END)
graph = builder.compile()
print(graph.invoke({"question": "why is the sky blue"}))
