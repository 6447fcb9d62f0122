from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    city: str
    report: str


def ask_city(state: State):
    city = interrupt("Which city?")
    return {"city": city}


def weather(state: State):
    return {"report": f"It's sunny in {state['city']}"}


sub = StateGraph(State)
sub.add_node(ask_city)
sub.add_node(weather)
sub.add_edge(START, "ask_city")
sub.add_edge("ask_city", "weather")
weather_graph = sub.compile()


def router(state: State):
    return {"report": "routing"}


builder = StateGraph(State)
builder.add_node("router", router)
builder.add_node("weather_graph", weather_graph)
builder.add_edge(START, "router")
builder.add_edge("router", "weather_graph")
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "1"}}

for update in graph.stream({"city": "", "report": ""}, config, subgraphs=True):
    print(update)

state = graph.get_state(config)
print(state.next)
print([i.value for i in state.interrupts])

for update in graph.stream(Command(resume="Oslo"), config, subgraphs=True):
    print(update)
print(graph.get_state(config).values)
