from typing import NotRequired

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    topic: NotRequired[str]
    joke: NotRequired[str]


def generate_topic(state: State):
    return {"topic": "socks in the dryer"}


def write_joke(state: State):
    return {"joke": f"Why do {state['topic']} disappear? They elope!"}


workflow = StateGraph(State)
workflow.add_node("generate_topic", generate_topic)
workflow.add_node("write_joke", write_joke)
workflow.add_edge(START, "generate_topic")
workflow.add_edge("generate_topic", "write_joke")
workflow.add_edge("write_joke", END)
graph = workflow.compile(checkpointer=InMemorySaver())

config = {"configurable": {"thread_id": "t1"}}
state = graph.invoke({}, config)
print(state["topic"])
print(state["joke"])

states = list(graph.get_state_history(config))
for s in states:
    if s.next:
        print(s.next, s.values)

selected_state = next(s for s in states if s.next == ("write_joke",))
print(selected_state.next)
print(selected_state.values)

new_config = graph.update_state(selected_state.config, values={"topic": "chickens"})
print(sorted(new_config["configurable"]))

print(graph.invoke(None, new_config))
print(graph.get_state(config).values)
replayed = graph.invoke(None, selected_state.config)
print(replayed)
