from typing import Literal

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict


class State(TypedDict):
    llm_output: str
    decision: str


def generate_llm_output(state: State) -> State:
    return {"llm_output": "This is the generated output."}


def human_approval(state: State) -> Command[Literal["approved_path", "rejected_path"]]:
    decision = interrupt(
        {
            "question": "Do you approve the following output?",
            "llm_output": state["llm_output"],
        }
    )
    if decision == "approve":
        return Command(goto="approved_path", update={"decision": "approved"})
    else:
        return Command(goto="rejected_path", update={"decision": "rejected"})


def approved_node(state: State) -> State:
    print("✅ Approved path taken.")
    return state


def rejected_node(state: State) -> State:
    print("❌ Rejected path taken.")
    return state


builder = StateGraph(State)
builder.add_node("generate_llm_output", generate_llm_output)
builder.add_node("human_approval", human_approval)
builder.add_node("approved_path", approved_node)
builder.add_node("rejected_path", rejected_node)
builder.set_entry_point("generate_llm_output")
builder.add_edge("generate_llm_output", "human_approval")
builder.add_edge("approved_path", END)
builder.add_edge("rejected_path", END)
graph = builder.compile(checkpointer=InMemorySaver())

config = {"configurable": {"thread_id": "approval-1"}}
result = graph.invoke({}, config=config)
print(result["__interrupt__"])
print(result["__interrupt__"][0].value["question"])
print(graph.get_state(config).next)

final_result = graph.invoke(Command(resume="approve"), config=config)
print(final_result)

config2 = {"configurable": {"thread_id": "approval-2"}}
for chunk in graph.stream({"llm_output": "", "decision": ""}, config2):
    print(chunk)
for chunk in graph.stream(Command(resume="reject"), config2):
    print(chunk)
print(graph.get_state(config2).next, graph.get_state(config2).interrupts)
