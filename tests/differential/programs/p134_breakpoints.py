from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict


class State(TypedDict):
    input: str


def step_1(state):
    print("---Step 1---")


def step_2(state):
    print("---Step 2---")


def step_3(state):
    print("---Step 3---")


builder = StateGraph(State)
builder.add_node("step_1", step_1)
builder.add_node("step_2", step_2)
builder.add_node("step_3", step_3)
builder.add_edge(START, "step_1")
builder.add_edge("step_1", "step_2")
builder.add_edge("step_2", "step_3")
builder.add_edge("step_3", END)
graph = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["step_3"])

initial_input = {"input": "hello world"}
thread = {"configurable": {"thread_id": "1"}}

for event in graph.stream(initial_input, thread, stream_mode="values"):
    print(event)

print(graph.get_state(thread).next)

for event in graph.stream(None, thread, stream_mode="values"):
    print(event)

print(graph.get_state(thread).next)

graph2 = builder.compile(checkpointer=InMemorySaver())
thread2 = {"configurable": {"thread_id": "2"}}
for event in graph2.stream(initial_input, thread2, interrupt_after=["step_1"]):
    print(event)
print(graph2.get_state(thread2).next)
for event in graph2.stream(None, thread2):
    print(event)
