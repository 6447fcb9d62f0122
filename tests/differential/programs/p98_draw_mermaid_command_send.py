import operator
from typing import Annotated, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send
from typing_extensions import TypedDict


class State(TypedDict):
    items: list[int]
    done: Annotated[list[int], operator.add]


def dispatch(state: State) -> Command[Literal["fan", "__end__"]]:
    return Command(goto="fan" if state["items"] else END)


def fan_out(state: State):
    return [Send("work", {"items": [item], "done": []}) for item in state["items"]]


def check(state: State) -> Literal["dispatch", "__end__"]:
    return END


builder = StateGraph(State)
builder.add_node("dispatch", dispatch)
builder.add_node("fan", lambda s: {})
builder.add_node("work", lambda s: {"done": [s["items"][0] * 10]})
builder.add_node("collect", lambda s: {})
builder.add_edge(START, "dispatch")
builder.add_conditional_edges("fan", fan_out, ["work"])
builder.add_edge("work", "collect")
builder.add_conditional_edges("collect", check)
graph = builder.compile()
drawing = graph.get_graph()
print(drawing.draw_mermaid())
print(drawing.edges)
print(graph.invoke({"items": [1, 2], "done": []}))
