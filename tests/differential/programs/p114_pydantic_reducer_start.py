import operator
from typing import Annotated

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from pydantic import BaseModel


def merge(left: dict, right: dict) -> dict:
    return {**left, **right}


class State(BaseModel):
    name: str
    log: Annotated[list[str], operator.add]
    total: Annotated[int, operator.add]
    seen: Annotated[dict, merge]


def node(state: State):
    print("node sees", state.log, state.total, state.seen)
    return {"name": "done"}


builder = StateGraph(State)
builder.add_node("node", node)
builder.add_edge(START, "node")
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "p"}}
for chunk in graph.stream({"name": "a"}, config, stream_mode="values"):
    print(dict(chunk))
values = graph.get_state(config).values
print(values["log"], values["total"], values["seen"])
result = graph.invoke({"name": "b", "log": ["given"]}, {"configurable": {"thread_id": "q"}})
print(result["log"], result["total"], result["seen"])
