import operator
from typing import Annotated

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    notes: Annotated[list[str], operator.add]


def research(state: State):
    return {"notes": ["researched"]}


def review(state: State):
    return {"notes": [f"reviewed {len(state['notes'])} notes"]}


team = StateGraph(State)
team.add_node("research", research)
team.add_node("review", review)
team.add_edge(START, "research")
team.add_edge("research", "review")
team_graph = team.compile()


def publish(state: State):
    return {"notes": ["published"]}


builder = StateGraph(State)
builder.add_node("team", team_graph)
builder.add_node("publish", publish)
builder.add_edge(START, "team")
builder.add_edge("team", "publish")
builder.add_edge("publish", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "s"}}
print(graph.invoke({"notes": ["brief"]}, config))
print(graph.get_state(config).values)
