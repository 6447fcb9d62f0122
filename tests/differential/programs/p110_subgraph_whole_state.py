import operator
from typing import Annotated

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph


class State(MessagesState):
    notes: Annotated[list[str], operator.add]
    title: str


def research(state: State):
    return {"notes": ["researched"], "messages": [AIMessage("found", id="m1")]}


def review(state: State):
    return {"notes": [f"reviewed {len(state['notes'])}"], "title": "Report"}


team = StateGraph(State)
team.add_node("research", research)
team.add_node("review", review)
team.add_edge(START, "research")
team.add_edge("research", "review")


def publish(state: State):
    return {"notes": ["published"]}


builder = StateGraph(State)
builder.add_node("team", team.compile())
builder.add_node("publish", publish)
builder.add_edge(START, "team")
builder.add_edge("team", "publish")
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "s"}}
start = {"notes": ["brief"], "messages": [HumanMessage("hi", id="h1")]}
for mode, chunk in graph.stream(start, config, stream_mode=["updates", "messages"]):
    if mode == "messages":
        message, metadata = chunk
        print("message", message.id, message.content, metadata["langgraph_node"])
    else:
        for node, update in chunk.items():
            print(node, {k: v for k, v in update.items() if k != "messages"})
            print(node, [m.id for m in update.get("messages", [])])
values = graph.get_state(config).values
print(values["notes"], values["title"], [m.id for m in values["messages"]])
print(graph.invoke({"messages": [HumanMessage("again", id="h2")]}, config)["notes"])
