import operator
from typing import Annotated

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    topic: str
    log: Annotated[list[str], operator.add]


def pick(state: State):
    return {"log": [f"picked {state['topic']}"]}


def write(state: State):
    return {"log": [f"wrote about {state['topic']}"]}


builder = StateGraph(State)
builder.add_node("pick", pick)
builder.add_node("write", write)
builder.add_edge(START, "pick")
builder.add_edge("pick", "write")
builder.add_edge("write", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "f"}}
print(graph.invoke({"topic": "cats", "log": []}, config))

before_write = next(s for s in graph.get_state_history(config) if s.next == ("write",))
print(before_write.values)
new_config = graph.update_state(before_write.config, {"topic": "dogs"})
print(graph.invoke(None, new_config))
print(graph.get_state(config).values)

replay_config = {
    "configurable": {
        "thread_id": "f",
        "checkpoint_id": before_write.config["configurable"]["checkpoint_id"],
    }
}
print(graph.invoke(None, replay_config)["log"])
