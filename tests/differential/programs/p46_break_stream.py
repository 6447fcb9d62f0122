from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    trail: list[str]


ran = []


def make(name: str):
    def node(state: State):
        ran.append(name)
        return {"trail": state["trail"] + [name]}

    return node


builder = StateGraph(State)
for name in ("a", "b", "c"):
    builder.add_node(name, make(name))
builder.add_edge(START, "a")
builder.add_edge("a", "b")
builder.add_edge("b", "c")
builder.add_edge("c", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "brk"}}
for chunk in graph.stream({"trail": []}, config):
    print(chunk)
    if "a" in chunk:
        break
print(ran)
print(graph.get_state(config).next, graph.get_state(config).values)
print(graph.invoke(None, config))
print(ran)
