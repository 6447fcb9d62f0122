from typing import Annotated

from fake_chat import FakeChat
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command


class State(MessagesState):
    desk: str


@tool
def transfer(desk: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Transfer the user to a desk."""
    return Command(
        update={
            "desk": desk,
            "messages": [ToolMessage(content=f"moved to {desk}", tool_call_id=tool_call_id)],
        },
        goto="desk",
    )


@tool
def careless(desk: str) -> Command:
    """Transfer without answering the call."""
    return Command(update={"desk": desk})


def run(tool_fn, name):
    llm = FakeChat(
        [
            {
                "content": "",
                "tool_calls": [{"name": name, "args": {"desk": "billing"}, "id": "t1"}],
            },
            "ok",
        ]
    )

    def agent(state: State):
        return {"messages": [llm.invoke(state["messages"])]}

    def desk(state: State):
        return {"messages": [("ai", f"{state['desk']} desk here")]}

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([tool_fn]), destinations=["desk"])
    builder.add_node("desk", desk)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    builder.add_edge("desk", END)
    graph = builder.compile()
    return graph.invoke({"messages": [HumanMessage(content="billing please")], "desk": ""})


result = run(transfer, "transfer")
print(result["desk"], [m.content for m in result["messages"]])
try:
    run(careless, "careless")
except Exception as error:
    print("error:", "ToolMessage" in str(error))
