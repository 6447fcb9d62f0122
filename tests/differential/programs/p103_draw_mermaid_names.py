import itertools

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    n: int


names = [
    "my node",
    'say "hi"',
    "[draft]",
    "问候",
    "end",
    "a-->b",
    "{x}",
    "_private_",
    "*bold*",
    "#1",
]
builder = StateGraph(State)
for name in names:
    builder.add_node(name, lambda s: {})
builder.add_edge(START, names[0])
for source, target in itertools.pairwise(names):
    builder.add_edge(source, target)
builder.add_edge(names[-1], END)
drawing = builder.compile(interrupt_before=["问候"]).get_graph()
print(drawing.draw_mermaid())
print(drawing.edges[:3])
