from typing import Annotated

from fake_chat import FakeChat
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command


class State(MessagesState):
    user_name: str


@tool
def remember_name(name: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Remember the user's name."""
    return Command(
        update={
            "user_name": name,
            "messages": [ToolMessage(content=f"Saved {name}", tool_call_id=tool_call_id)],
        }
    )


llm = FakeChat(
    [
        {
            "content": "",
            "tool_calls": [{"name": "remember_name", "args": {"name": "Ola"}, "id": "n1"}],
        },
        "Nice to meet you, Ola.",
    ]
)


def agent(state: State):
    return {"messages": [llm.invoke(state["messages"])]}


builder = StateGraph(State)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([remember_name]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
graph = builder.compile()
result = graph.invoke({"messages": [HumanMessage(content="I am Ola")], "user_name": ""})
print(result["user_name"])
print([m.content for m in result["messages"]])
