import operator
from typing import Annotated

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def worker(state: State):
    return Command(graph=Command.PARENT, goto="supervisor", update={"log": ["worker hands off"]})


team = StateGraph(State)
team.add_node("worker", worker)
team.add_edge(START, "worker")
team_graph = team.compile()


def supervisor(state: State):
    return {"log": ["supervisor done"]}


builder = StateGraph(State)
builder.add_node("team", team_graph, destinations=("supervisor",))
builder.add_node("supervisor", supervisor)
builder.add_edge(START, "team")
builder.add_edge("supervisor", END)
graph = builder.compile()
print(graph.invoke({"log": []}))
